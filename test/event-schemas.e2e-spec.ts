import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { EVENT_CATALOGUE, EVENT_TYPES, PUBLISHABLE_EVENT_TYPES, type EventType } from '../src/catalogue/event-catalogue';
import { ADMIN_KEY, startApp, type TestApp } from './support/app';
import { expectError, expectJson } from './support/expectations';
import { createWebhook, orderData } from './support/fixtures';
import { Receiver } from './support/receiver';

/**
 * The `data` that the end-to-end specs publish (test/support/fixtures.ts and the specs' own
 * payloads), so the promise "whatever Hookline accepts validates against the schema" is checked
 * on what the rest of the suite relies on, not only on the catalogue's examples.
 */
const payment = EVENT_CATALOGUE['payment.received'].example;
const E2E_PAYLOADS: Array<{ type: EventType; data: Record<string, unknown>; from: string }> = [
  ...[0, 1, 2, 77, 999].map((n) => ({ type: 'order.created' as const, data: orderData(n), from: `fixtures orderData(${n})` })),
  {
    type: 'order.created',
    data: { id: 'ord_1', orderNumber: 'ORD-1', status: 'PENDING', total: 100, currency: 'EUR' },
    from: 'auth, portal ORDER',
  },
  { type: 'order.created', data: { id: 'o', orderNumber: 'ORD-1', status: 'PENDING', total: 1, currency: 'EUR' }, from: 'database-outage' },
  { type: 'order.created', data: { id: 'ord_1', orderNumber: '1001', status: 'PENDING', total: 1, currency: 'EUR' }, from: 'input-rules' },
  { type: 'order.created', data: { ...orderData(1), orderNumber: 'BY-key_01' }, from: 'store-isolation-property' },
  { type: 'order.cancelled', data: { ...orderData(3), status: 'CANCELLED', reason: 'Customer asked' }, from: 'publishing-batch' },
  { type: 'payment.received', data: { ...payment, orderId: 'ord_7' }, from: 'publishing-batch payment' },
  { type: 'payment.received', data: { ...payment, amount: 101 }, from: 'publishing' },
  { type: 'payment.received', data: { ...payment, amount: 1 }, from: 'publishing-batch tx' },
  {
    type: 'customer.created',
    data: { id: 'cus_4', email: 'c4@example.com', firstName: 'C', lastName: '4' },
    from: 'publishing-batch customer',
  },
  { type: 'customer.created', data: { ...EVENT_CATALOGUE['customer.created'].example }, from: 'replay CUSTOMER' },
  { type: 'product.created', data: { ...EVENT_CATALOGUE['product.created'].example }, from: 'replay PRODUCT' },
];

interface EventTypeBody {
  type: string;
  category: string;
  description: string;
  example: Record<string, unknown>;
  schema: Record<string, unknown>;
}

describe('event schemas', () => {
  let t: TestApp;
  let receiver: Receiver;
  const ajv = new Ajv2020({ allErrors: true, strict: true, validateFormats: false });
  const validators = new Map<string, ValidateFunction>();

  async function schemaOf(type: string): Promise<ValidateFunction> {
    let validate = validators.get(type);
    if (!validate) {
      const body = await expectJson<EventTypeBody>(await t.api(`/event-types/${type}`), 200);
      validate = ajv.compile(body.schema);
      validators.set(type, validate);
    }
    return validate;
  }

  beforeAll(async () => {
    receiver = await Receiver.start();
    t = await startApp();
  });

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it.each(EVENT_TYPES)('GET /event-types/%s answers the type with a JSON Schema its example validates against', async (type) => {
    const body = await expectJson<EventTypeBody>(await t.api(`/event-types/${type}`), 200);
    expect(body).toMatchObject({ type, category: EVENT_CATALOGUE[type].category, example: EVENT_CATALOGUE[type].example });
    expect(body.schema).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
    });
    const validate = await schemaOf(type);
    expect({ type, valid: validate(body.example), errors: validate.errors ?? null }).toEqual({ type, valid: true, errors: null });
  });

  it('lists the same schemas in GET /event-types', async () => {
    const { data } = await expectJson<{ data: EventTypeBody[] }>(await t.api('/event-types'), 200);
    for (const entry of data) {
      expect(entry.schema).toEqual((await expectJson<EventTypeBody>(await t.api(`/event-types/${entry.type}`), 200)).schema);
    }
  });

  it('answers an unknown type with 404 naming the nearest one', async () => {
    await expectError(
      await t.api('/event-types/order.creatd'),
      404,
      'Event type "order.creatd" (did you mean "order.created"?) not found; see GET /event-types',
    );
    await expectError(await t.api('/event-types/nothing-like-it'), 404, 'Event type "nothing-like-it" not found; see GET /event-types');
  });

  it('serves a portal session limited to one endpoint, which reads the catalogue like any session', async () => {
    const webhook = await createWebhook(t, `${receiver.url}/portal`);
    const session = await expectJson<{ token: string }>(
      await t.api('/portal-sessions', { method: 'POST', json: { capabilities: ['read'], webhookIds: [webhook.id] } }),
      201,
    );
    const res = await t.api('/event-types/stock.low', { key: null, headers: { Authorization: `Bearer ${session.token}` } });
    expect((await expectJson<EventTypeBody>(res, 200)).type).toBe('stock.low');
  });

  it.each(E2E_PAYLOADS.map((payload) => [payload.from, payload] as const))(
    'the payload of %s validates against its schema, and POST /events accepts it',
    async (_from, { type, data }) => {
      const validate = await schemaOf(type);
      expect({ valid: validate(data), errors: validate.errors ?? null }).toEqual({ valid: true, errors: null });
      await expectJson(await t.api('/events', { method: 'POST', json: { type, data } }), 202);
    },
  );

  it('refuses to publish what the schema refuses, and the schema refuses what publishing refuses', async () => {
    const cases: Array<Record<string, unknown>> = [
      { ...orderData(), total: '12' },
      { ...orderData(), orderNumber: '😀'.repeat(65) },
      { ...orderData(), total: 2 ** 53 },
      { ...orderData(), surprise: true },
    ];
    const validate = await schemaOf('order.created');
    for (const data of cases) {
      expect(validate(data)).toBe(false);
      expect((await t.api('/events', { method: 'POST', json: { type: 'order.created', data } })).status).toBe(400);
    }
    const emoji = { ...orderData(), orderNumber: '😀'.repeat(64) };
    expect(validate(emoji)).toBe(true);
    await expectJson(await t.api('/events', { method: 'POST', json: { type: 'order.created', data: emoji } }), 202);
  });

  describe('the OpenAPI document (/docs-json)', () => {
    let document: {
      openapi: string;
      webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: object; example: unknown }> } } }>;
      components: { schemas: Record<string, unknown> };
    };
    let docAjv: Ajv2020;

    beforeAll(async () => {
      document = await expectJson(await fetch(`${t.baseUrl}/docs-json`), 200);
      // The document's own schemas, $refs and all, as an integrator's validator would load them.
      docAjv = new Ajv2020({ allErrors: true, strict: false, validateFormats: false });
      docAjv.addSchema({ $id: 'https://hookline.test/openapi.json', components: document.components });
    });

    it('is OpenAPI 3.1 with one webhook per event type and webhook.test', () => {
      expect(document.openapi).toBe('3.1.0');
      expect(Object.keys(document.webhooks)).toEqual([...EVENT_TYPES, 'webhook.test']);
      expect(JSON.stringify(document)).not.toContain('"nullable"');
    });

    it.each([...EVENT_TYPES, 'webhook.test'])('%s: its envelope example validates against its schema', (type) => {
      const body = document.webhooks[type].post.requestBody.content['application/json'];
      const validate = docAjv.compile({ $id: `https://hookline.test/webhooks/${type}`, ...envelopeWithBase(body.schema) });
      expect({ type, valid: validate(body.example), errors: validate.errors ?? null }).toEqual({ type, valid: true, errors: null });
      expect(validate({ ...(body.example as object), type: 'something.else' })).toBe(false);
    });

    it('describes the deliveries Hookline actually sends', async () => {
      const types = PUBLISHABLE_EVENT_TYPES.filter((type) => type !== 'order.created');
      await createWebhook(t, `${receiver.url}/all`, [...types], {}, ADMIN_KEY);
      for (const type of types) {
        await expectJson(await t.api('/events', { method: 'POST', json: { type, data: EVENT_CATALOGUE[type].example } }), 202);
      }
      const delivered = await receiver.waitFor(types.length, (request) => request.path === '/all');
      for (const request of delivered) {
        const envelope = JSON.parse(request.body.toString()) as { type: string };
        const schema = document.webhooks[envelope.type].post.requestBody.content['application/json'].schema;
        const validate = docAjv.compile({ $id: `https://hookline.test/delivered/${envelope.type}`, ...envelopeWithBase(schema) });
        expect({ type: envelope.type, valid: validate(envelope), errors: validate.errors ?? null }).toEqual({
          type: envelope.type,
          valid: true,
          errors: null,
        });
      }
    });
  });
});

/** Points the schema's `#/components/...` references at the document loaded under its $id. */
function envelopeWithBase(schema: object): object {
  return JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"https://hookline.test/openapi.json#/components/')) as object;
}
