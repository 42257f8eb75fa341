import fc from 'fast-check';
import Ajv2020 from 'ajv/dist/2020';
import { validateShape } from './data-shape';
import { EVENT_CATALOGUE, EVENT_TYPES, eventDataSchema, type EventType, TEST_EVENT, validateEventData } from './event-catalogue';
import { compileSchema, jsonSchemaOf, schemaProblems } from './event-schema';
import { WebhookDeliveryFailedData } from './webhook-events';

/** The messages of the rules across fields, which JSON Schema cannot say: only the field checks make them. */
const CROSS_FIELD = /must differ from data\.status|must not exceed data\.amount|must equal the number of data\.stops/;

/** A plain Ajv 2020 as an integrator would run it, with `format` an annotation as 2020-12 has it by default. */
const integrator = new Ajv2020({ allErrors: true, strict: true, validateFormats: false });
const integratorValidators = new Map(EVENT_TYPES.map((type) => [type, integrator.compile(eventDataSchema(type))]));
const integratorValidator = (type: EventType) => integratorValidators.get(type)!;

describe('the event data schemas', () => {
  it.each(EVENT_TYPES)('%s: its example validates against its JSON Schema (Ajv 2020, strict)', (type) => {
    const validate = integratorValidator(type);
    const { example } = EVENT_CATALOGUE[type];
    expect({ type, problems: schemaProblems(validate(example) ? [] : validate.errors) }).toEqual({ type, problems: [] });
    expect(compileSchema(jsonSchemaOf(EVENT_CATALOGUE[type].dataClass))(example)).toBe(true);
  });

  it('validates the example of webhook.test too', () => {
    expect(compileSchema(jsonSchemaOf(TEST_EVENT.dataClass))(TEST_EVENT.example)).toBe(true);
  });

  it('declares the 2020-12 dialect, a title, the description and the example', () => {
    expect(eventDataSchema('stock.low')).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      title: 'stock.low data',
      description: 'Stock falls below the threshold.',
      examples: [EVENT_CATALOGUE['stock.low'].example],
      type: 'object',
      additionalProperties: false,
    });
  });

  it('writes a nullable field as a type list with "null"', () => {
    const schema = jsonSchemaOf(WebhookDeliveryFailedData) as { properties: Record<string, { type: unknown }> };
    expect(schema.properties.lastStatusCode.type).toEqual(['integer', 'null']);
    expect(schema.properties.lastError.type).toEqual(['string', 'null']);
    expect(schema.properties.deliveryId.type).toBe('string');
  });

  it('names the field of each problem as publishing does', () => {
    const validate = compileSchema(jsonSchemaOf(EVENT_CATALOGUE['delivery.batch_started'].dataClass));
    validate({ batchId: 'b', stopCount: 1, stops: [{ orderId: 'o' }], extra: 1 });
    expect(schemaProblems(validate.errors)).toEqual(
      expect.arrayContaining(['data.extra is not allowed', 'data.stops[0].orderNumber is required']),
    );
  });
});

/** Values that sit on the edges of the field kinds: types, lengths, ranges, formats. */
const EDGE_VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1,
  1.5,
  2 ** 53,
  Number.MAX_SAFE_INTEGER,
  '',
  'x',
  '12',
  'EUR',
  'eur',
  'PENDING',
  'SHIPPED',
  'CARD',
  'ACTIVE',
  'OTHER',
  'failing',
  '😀'.repeat(64),
  '😀'.repeat(65),
  'x'.repeat(64),
  'x'.repeat(65),
  'x'.repeat(201),
  '+38640123456',
  '+0123',
  'ana@example.com',
  'not-an-email',
  '2026-11-23T09:00:00.000Z',
  '2026-02-30T09:00:00.000Z',
  '2026-13-45T09:00:00.000Z',
  '2026-11-23T09:00:00Z',
  [],
  [{ orderId: 'o', orderNumber: 'n' }],
  [{ orderId: 'o' }],
  ['x'],
  {},
];

/** A catalogue example with one field replaced, removed or added. */
function mutated(type: EventType) {
  const example = EVENT_CATALOGUE[type].example as unknown as Record<string, unknown>;
  const keys = Object.keys(jsonSchemaOf(EVENT_CATALOGUE[type].dataClass).properties as object);
  return fc.oneof(
    fc
      .record({ key: fc.constantFrom(...keys), value: fc.constantFrom(...EDGE_VALUES) })
      .map(({ key, value }) => ({ ...example, [key]: value })),
    fc.constantFrom(...keys).map((key) => Object.fromEntries(Object.entries(example).filter(([name]) => name !== key))),
    fc
      .constantFrom('extra', 'constructor', '__proto__')
      .map((key) => ({ ...example, ...(JSON.parse(`{${JSON.stringify(key)}: 1}`) as object) })),
  );
}

describe('publishing and the schema agree', () => {
  const types = fc.constantFrom(...EVENT_TYPES);

  it('accepts for publishing only data that validates against the schema integrators get', () => {
    fc.assert(
      fc.property(
        types.chain((type) => fc.tuple(fc.constant(type), mutated(type))),
        ([type, data]) => {
          if (validateEventData(type, data).length === 0) expect(integratorValidator(type)(data)).toBe(true);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('has field checks that refuse exactly what the schema refuses, apart from the rules across fields', () => {
    const validators = new Map(EVENT_TYPES.map((type) => [type, compileSchema(jsonSchemaOf(EVENT_CATALOGUE[type].dataClass))]));
    fc.assert(
      fc.property(
        types.chain((type) => fc.tuple(fc.constant(type), mutated(type))),
        ([type, data]) => {
          const fieldProblems = validateShape(EVENT_CATALOGUE[type].dataClass, data);
          const schemaValid = validators.get(type)!(data);
          if (schemaValid) expect(fieldProblems.filter((problem) => !CROSS_FIELD.test(problem))).toEqual([]);
          else expect(fieldProblems).not.toEqual([]);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses a text too long in code points and an integer past the safe range, like the schema', () => {
    const long = { ...EVENT_CATALOGUE['order.created'].example, orderNumber: '😀'.repeat(65) };
    const emoji = { ...EVENT_CATALOGUE['order.created'].example, orderNumber: '😀'.repeat(64) };
    const huge = { ...EVENT_CATALOGUE['order.created'].example, total: 2 ** 53 };
    expect(validateEventData('order.created', long)).toEqual(['data.orderNumber must be at most 64 characters long']);
    expect(validateEventData('order.created', emoji)).toEqual([]);
    expect(validateEventData('order.created', huge)).toEqual([`data.total must be at most ${Number.MAX_SAFE_INTEGER}`]);
    expect(integratorValidator('order.created')(long)).toBe(false);
    expect(integratorValidator('order.created')(emoji)).toBe(true);
    expect(integratorValidator('order.created')(huge)).toBe(false);
  });
});
