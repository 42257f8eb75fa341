import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, type OpenAPIObject, type OperationObject, type PathItemObject, SwaggerModule } from '@nestjs/swagger';
import type { AppConfig } from '../config/app-config';
import { API_PREFIX } from './api-prefix';
import { ERROR_DESCRIPTIONS } from './api-errors.decorator';
import { openApiDescription } from './openapi-description';
import { toOpenApi31 } from './openapi-31';

export const API_KEY_SECURITY = 'api-key';
/** A portal session's token, `Authorization: Bearer <token>`. */
export const PORTAL_SESSION_SECURITY = 'portal-session';

/** The extension that lists an operation's scopes: OpenAPI 3.0 allows scopes in a security requirement only for OAuth2 and OpenID Connect. */
export const REQUIRED_SCOPES_EXTENSION = 'x-required-scopes';

/** In the order an integrator needs them (Swagger UI follows it): their own work first, administration after. */
const TAGS: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'webhooks', description: "Endpoints that receive the store's events: register, update, test, rotate the signing secret" },
  { name: 'events', description: 'The event catalogue, publishing an event, and an event with its deliveries' },
  { name: 'deliveries', description: 'The delivery log of each endpoint, retries, and replaying what an endpoint missed' },
  { name: 'api-keys', description: "The store's own API keys (store administrator)" },
  { name: 'stores', description: 'Stores and their first keys (platform administrator)' },
  {
    name: 'portal-sessions',
    description: 'Links that open the dashboard of one store without an API key, with a token for the platform’s own code',
  },
  { name: 'health', description: 'Readiness, for load balancers and orchestrators (no API key)' },
];

/**
 * What a receiver gets: OpenAPI 3.1's `webhooks` section, one POST per event type, and the
 * components its bodies refer to. Given by the event catalogue, which `common` cannot import.
 */
export interface WebhooksSection {
  tag: { name: string; description: string };
  webhooks: Record<string, unknown>;
  schemas: Record<string, unknown>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * The OpenAPI document of the application's routes. Building it needs only the modules' metadata,
 * so it also works on an application created in preview mode, without a database (src/openapi.ts).
 */
export function buildOpenApiDocument(app: INestApplication, config: AppConfig, received?: WebhooksSection): OpenAPIObject {
  const builder = new DocumentBuilder()
    .setTitle(`${config.serviceName} API`)
    .setDescription(openApiDescription(config))
    .setVersion('1.0')
    // Relative, so that Swagger UI's "Try it out" calls whichever host served the page.
    .addServer(`/${API_PREFIX}`, 'This deployment')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, API_KEY_SECURITY)
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'opaque',
        description: 'A portal session’s token (`hlp_…`), from POST /portal-sessions',
      },
      PORTAL_SESSION_SECURITY,
    );
  for (const tag of TAGS) builder.addTag(tag.name, tag.description);
  if (received) builder.addTag(received.tag.name, received.tag.description);
  const document = SwaggerModule.createDocument(app, builder.build(), { ignoreGlobalPrefix: true });
  completeOperations(document);
  toOpenApi31(document);
  if (received) addWebhooks(document, received);
  return document;
}

/** After the 3.1 conversion: the section is written in 3.1 already. */
function addWebhooks(document: OpenAPIObject, received: WebhooksSection): void {
  const schemas = (document.components ??= {}).schemas ?? {};
  for (const [name, schema] of Object.entries(received.schemas)) {
    if (name in schemas) throw new Error(`The OpenAPI document already has a schema named ${name}`);
    schemas[name] = schema as (typeof schemas)[string];
  }
  document.components.schemas = schemas;
  Object.assign(document, { webhooks: received.webhooks });
}

/** Swagger UI at /docs and the OpenAPI document at /docs-json (served from local assets, no CDN). */
export function setupSwagger(app: INestApplication, config: AppConfig, received?: WebhooksSection): void {
  const document = buildOpenApiDocument(app, config, received);
  const options = { jsonDocumentUrl: 'docs-json', swaggerOptions: { persistAuthorization: true } };
  SwaggerModule.setup('docs', app, document, options);
  SwaggerModule.setup(`${API_PREFIX}/docs`, app, document, { ...options, jsonDocumentUrl: `${API_PREFIX}/docs-json` });
}

/** What holds for every route and so is not repeated on each controller method. */
function completeOperations(document: OpenAPIObject): void {
  for (const path of Object.keys(document.paths)) {
    // The server URL carries the prefix: a route also declared under it (GET /health) is listed once.
    if (path.startsWith(`/${API_PREFIX}/`)) {
      delete document.paths[path];
      continue;
    }
    const item: PathItemObject = document.paths[path];
    for (const method of METHODS) {
      const operation = item[method];
      if (operation) completeOperation(operation);
    }
  }
}

function completeOperation(operation: OperationObject & { [REQUIRED_SCOPES_EXTENSION]?: string[] }): void {
  const scopes = operation[REQUIRED_SCOPES_EXTENSION];
  if (scopes) {
    const names = scopes.map((scope) => `\`${scope}\``).join(', ');
    const bySession = operation.security?.some((requirement) => PORTAL_SESSION_SECURITY in requirement) === true;
    const session = !bySession
      ? ''
      : ` (or a portal session’s token${scopes.length === 0 ? '' : scopes.length > 1 ? ' holding them' : ' holding it'})`;
    const sentence =
      scopes.length > 0
        ? `Requires an API key with the scope${scopes.length > 1 ? 's' : ''} ${names}${session}.`
        : `Requires an API key, of any scope${session}.`;
    operation.description = operation.description ? `${operation.description}\n\n${sentence}` : sentence;
  } else {
    // The API key guard refuses a route that declares neither @RequireScopes nor @Public, so a route
    // without a requirement is a public one: say so rather than leave it to a default.
    operation.security ??= [];
  }
  // The body parser answers 413 to any body over the limit, before the route sees it.
  if (operation.requestBody && !operation.responses['413']) {
    operation.responses['413'] = {
      description: ERROR_DESCRIPTIONS[413],
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
    };
  }
}
