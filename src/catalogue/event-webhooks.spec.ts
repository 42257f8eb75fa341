import Ajv2020 from 'ajv/dist/2020';
import { EVENT_TYPES } from './event-catalogue';
import { eventWebhooks, WEBHOOKS_TAG } from './event-webhooks';

describe('eventWebhooks', () => {
  const { tag, webhooks, schemas } = eventWebhooks();

  it('has one POST per event type and one for webhook.test, under its own tag', () => {
    expect(tag).toBe(WEBHOOKS_TAG);
    expect(Object.keys(webhooks).sort()).toEqual([...EVENT_TYPES, 'webhook.test'].sort());
    for (const entry of Object.values(webhooks)) expect(entry.post).toMatchObject({ tags: [WEBHOOKS_TAG.name], security: [] });
  });

  it('gives every operation a distinct id', () => {
    const ids = Object.values(webhooks).map((entry) => (entry.post as { operationId: string }).operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect((webhooks['order.created'].post as { operationId: string }).operationId).toBe('receiveOrderCreated');
  });

  it('makes each example an envelope that validates against its schema, and refuses another type', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const [name, schema] of Object.entries(schemas)) ajv.addSchema(schema, `#/components/schemas/${name}`);
    for (const [type, entry] of Object.entries(webhooks)) {
      const content = (entry.post as { requestBody: { content: Record<string, { schema: object; example: { type: string } }> } })
        .requestBody.content['application/json'];
      const validate = ajv.compile(content.schema);
      expect({ type, valid: validate(content.example), errors: validate.errors }).toEqual({ type, valid: true, errors: null });
      expect(validate({ ...content.example, type: 'not.this.one' })).toBe(false);
    }
  });
});
