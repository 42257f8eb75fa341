import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { OpenAPIObject } from '@nestjs/swagger';
import { AppModule } from './app.module';
import { API_PREFIX, PREFIX_OPTIONS } from './common/api-prefix';
import { HooklineExpressAdapter } from './common/express-adapter';
import { buildOpenApiDocument } from './common/swagger';
import { eventWebhooks } from './catalogue/event-webhooks';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';

/**
 * The document that /docs-json serves, built without a database or a listening server: preview
 * mode reads the modules' metadata and instantiates nothing.
 */
export async function previewOpenApiDocument(config: AppConfig): Promise<OpenAPIObject> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), new HooklineExpressAdapter(), {
    preview: true,
    logger: false,
    bodyParser: false,
  });
  // As configureApp does (which needs instantiated providers).
  app.setGlobalPrefix(API_PREFIX, PREFIX_OPTIONS);
  return buildOpenApiDocument(app, config, eventWebhooks());
}

/** `npm run openapi [-- <file>]`: writes the document to the file, or to standard output. */
async function main(): Promise<void> {
  const json = `${JSON.stringify(await previewOpenApiDocument(loadConfig(process.env)), null, 2)}\n`;
  const file = process.argv[2];
  if (file) writeFileSync(file, json);
  else process.stdout.write(json);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(
      `${error instanceof ConfigError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  });
}
