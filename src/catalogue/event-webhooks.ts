import type { WebhooksSection } from '../common/swagger';
import type { DataClass } from './data-shape';
import { EVENT_CATALOGUE, EVENT_TYPES, TEST_EVENT } from './event-catalogue';
import { jsonSchemaOf, type JsonSchema } from './event-schema';

export const WEBHOOKS_TAG = {
  name: 'event-deliveries',
  description:
    'What Hookline POSTs to your endpoints: one entry per event type in the `webhooks` section, its body the envelope with that type’s `data`',
};

const EXAMPLE_ID = 'evt_01jd5v1xkq8w3r0m6m2n4p7s9t';
const EXAMPLE_TIMESTAMP = '2026-11-22T10:00:00.000Z';

const ACKNOWLEDGED =
  'Any 2xx answer acknowledges the delivery. Any other status, or no answer within the delivery timeout, is a failed attempt ' +
  'and is retried on the retry schedule; 410 Gone disables the endpoint.';

const SIGNED =
  'Signed per Standard Webhooks: `webhook-id` (the event id, the same on every attempt), `webhook-timestamp` and ' +
  '`webhook-signature` headers over the exact body; `verifyWebhook` of @hookline/client checks them.';

/**
 * The OpenAPI 3.1 `webhooks` section: one POST per event type (and webhook.test), the envelope
 * with that type's data schema and example, so integrators can generate types for what they
 * receive. The data schemas are the ones GET /event-types/:type serves, one component per class.
 */
export function eventWebhooks(): WebhooksSection {
  const entries = [
    ...EVENT_TYPES.map((type) => EVENT_CATALOGUE[type] as { type: string; description: string; dataClass: DataClass; example: unknown }),
    { ...TEST_EVENT, dataClass: TEST_EVENT.dataClass as DataClass },
  ];
  const schemas: Record<string, JsonSchema> = {};
  const webhooks: Record<string, JsonSchema> = {};
  for (const { type, description, dataClass, example } of entries) {
    schemas[dataClass.name] ??= jsonSchemaOf(dataClass);
    webhooks[type] = {
      post: {
        operationId: `receive${type.replace(/(^|[._])(\w)/g, (_m, _sep, letter: string) => letter.toUpperCase())}`,
        summary: `${type}: ${description}`,
        description: `${description}\n\n${SIGNED}`,
        tags: [WEBHOOKS_TAG.name],
        security: [],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: envelopeSchema(type, dataClass.name),
              example: { id: EXAMPLE_ID, type, timestamp: EXAMPLE_TIMESTAMP, data: example },
            },
          },
        },
        responses: { '200': { description: ACKNOWLEDGED } },
      },
    };
  }
  return { tag: WEBHOOKS_TAG, webhooks, schemas };
}

function envelopeSchema(type: string, dataComponent: string): JsonSchema {
  return {
    type: 'object',
    description: `The envelope of a ${type} event; its exact bytes are signed.`,
    properties: {
      id: {
        type: 'string',
        description: 'The event id (`evt_…`): the same on every attempt and retry, so a receiver can drop duplicates.',
      },
      type: { type: 'string', const: type, description: 'The event type.' },
      timestamp: { type: 'string', format: 'date-time', description: 'When the event was published (ISO 8601 UTC, milliseconds).' },
      data: { $ref: `#/components/schemas/${dataComponent}` },
    },
    required: ['id', 'type', 'timestamp', 'data'],
    additionalProperties: false,
  };
}
