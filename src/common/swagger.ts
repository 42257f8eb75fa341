import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { AppConfig } from '../config/app-config';
import { API_PREFIX } from './api-prefix';

export const API_KEY_SECURITY = 'api-key';

/** Swagger UI at /docs and the OpenAPI document at /docs-json (served from local assets, no CDN). */
export function setupSwagger(app: INestApplication, config: AppConfig): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle(`${config.serviceName} API`)
      .setDescription(
        [
          `Outbound webhooks for the store platform. Every path is under \`/${API_PREFIX}\`.`,
          '',
          'Authenticate with the `X-API-Key` header (the **Authorize** button). Errors are always',
          '`{statusCode, error, message}`. Deliveries are signed: see the README for the receiver side.',
        ].join('\n'),
      )
      .setVersion('1.0')
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, API_KEY_SECURITY)
      .build(),
  );
  const options = { jsonDocumentUrl: 'docs-json', swaggerOptions: { persistAuthorization: true } };
  SwaggerModule.setup('docs', app, document, options);
  SwaggerModule.setup(`${API_PREFIX}/docs`, app, document, { ...options, jsonDocumentUrl: `${API_PREFIX}/docs-json` });
}
