import Ajv2020 from 'ajv/dist/2020';
import { EVENT_TYPES } from './event-catalogue';
import { eventWebhooks, WEBHOOKS_TAG } from './event-webhooks';

type Operation = {
  operationId: string;
  tags: string[];
  security: unknown[];
  requestBody: { content: { 'application/json': { schema: object; example: { type: string } } } };
};

describe('eventWebhooks', () => {
  const section = eventWebhooks();
  const operations = Object.entries(section.webhooks).map(([type, entry]) => [type, (entry as { post: Operation }).post] as const);

  it('has one POST per event type and one for webhook.test, under its own tag', () => {
    expect(section.tag).toBe(WEBHOOKS_TAG);
    expect(operations.map(([type]) => type).sort()).toEqual([...EVENT_TYPES, 'webhook.test'].sort());
    for (const [, post] of operations) expect(post).toMatchObject({ tags: [WEBHOOKS_TAG.name], security: [] });
  });

  it('gives every operation a distinct id', () => {
    const ids = operations.map(([, post]) => post.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(operations.find(([type]) => type === 'order.created')?.[1].operationId).toBe('receiveOrderCreated');
  });

  it('makes each example an envelope that validates against its schema, and refuses another type', () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    for (const [name, schema] of Object.entries(section.schemas)) ajv.addSchema(schema as object, `#/components/schemas/${name}`);
    for (const [type, post] of operations) {
      const content = post.requestBody.content['application/json'];
      const validate = ajv.compile(content.schema);
      expect({ type, valid: validate(content.example), errors: validate.errors }).toEqual({ type, valid: true, errors: null });
      expect(validate({ ...content.example, type: 'not.this.one' })).toBe(false);
    }
  });
});
