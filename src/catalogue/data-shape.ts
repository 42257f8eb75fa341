import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { plainToInstance, Type } from 'class-transformer';
import { isEmail, ValidateBy, ValidateIf, ValidateNested, validateSync, type ValidationError } from 'class-validator';

/**
 * The building blocks of the event `data` shapes. Each field is declared once, with one decorator
 * (`@AmountField({...})`), and that declaration feeds all three views of the shape:
 *
 * - runtime validation: one class-validator constraint per field, so a field yields one message;
 * - the OpenAPI document: an `@ApiProperty` with type, description, example and enum;
 * - {@link describeShape}: the JSON-Schema-like description served by GET /event-types.
 */

/** A class describing one `data` shape. */
export type DataClass<T extends object = object> = new () => T;

/** JSON-Schema-like description of one property (a subset of JSON Schema, OpenAPI 3 compatible). */
export interface PropertySchema {
  type: 'string' | 'integer' | 'array';
  description: string;
  enum?: readonly string[];
  format?: 'date-time' | 'email';
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  items?: ShapeSchema;
  /** The value may also be null (OpenAPI 3.0's `nullable`). */
  nullable?: true;
}

/** JSON-Schema-like description of a `data` shape: an object with exactly these properties. */
export interface ShapeSchema {
  type: 'object';
  properties: Record<string, PropertySchema>;
  required: string[];
  additionalProperties: false;
}

/** What a field's check gets besides its value: the object the field belongs to. */
type Siblings = Readonly<Record<string, unknown>>;

/** Returns the problem with a value ("must be an integer"), or undefined when it is fine. */
type Check = (value: unknown, siblings: Siblings) => string | undefined;

interface FieldSpec {
  name: string;
  optional: boolean;
  example: unknown;
  schema: PropertySchema;
  check: Check;
  /** For a list of nested objects: their class. */
  items?: () => DataClass;
}

/** Options every field decorator takes. */
export interface FieldOptions<V> {
  description: string;
  example: V;
  /** May be left out (but not null: an optional field is either absent or valid). */
  optional?: boolean;
  /** Always present, but may be null (a value that does not exist, such as the status code of a timeout). */
  nullable?: boolean;
  /** A rule involving other fields, run once the value itself is valid. */
  refine?: (value: V, siblings: Siblings) => string | undefined;
}

/** The one class-validator constraint name of our fields (its message is the field's problem). */
const FIELD_CONSTRAINT = 'eventDataField';

/** Own fields of each data class, in declaration order; inherited ones are found by walking up. */
const FIELDS = new Map<object, FieldSpec[]>();

function field<V>(options: FieldOptions<V>, schema: PropertySchema, check: Check, items?: () => DataClass) {
  const { optional = false, nullable = false, example, refine } = options;
  if (nullable) schema = { ...schema, nullable: true };
  const fullCheck: Check = (value, siblings) => {
    if (value === undefined) return 'is required';
    if (value === null && nullable) return undefined;
    return check(value, siblings) ?? refine?.(value as V, siblings);
  };
  return (target: object, key: string | symbol): void => {
    const name = String(key);
    const owner = target.constructor;
    FIELDS.set(owner, [...(FIELDS.get(owner) ?? []), { name, optional, example, schema, check: fullCheck, items }]);

    ApiProperty(apiPropertyOptions(schema, optional, example, items))(target, key);
    if (optional) ValidateIf((object: Siblings) => object[name] !== undefined)(target, key);
    ValidateBy({
      name: FIELD_CONSTRAINT,
      validator: {
        validate: (value: unknown, args?: { object: object }) => fullCheck(value, asSiblings(args?.object)) === undefined,
        defaultMessage: (args?: { value: unknown; object: object }) => fullCheck(args?.value, asSiblings(args?.object)) ?? 'is invalid',
      },
    })(target, key);
    if (items) {
      ValidateNested({ each: true })(target, key);
      Type(items)(target, key);
    }
  };
}

function asSiblings(object: object | undefined): Siblings {
  return (object ?? {}) as Siblings;
}

function apiPropertyOptions(schema: PropertySchema, optional: boolean, example: unknown, items?: () => DataClass): ApiPropertyOptions {
  const { type, enum: values, items: _items, ...rest } = schema;
  const common = { ...rest, required: !optional, example };
  // Swagger resolves a lazy type only when the function is literally named `type`.
  if (items) return { ...common, type: () => items(), isArray: true };
  return values ? { ...common, type, enum: [...values] } : { ...common, type };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Field decorators

/**
 * A non-empty string of at most `maxLength` characters (names, order numbers, free text).
 * Characters are Unicode code points, as JSON Schema's `maxLength` counts them, so an emoji is one.
 */
export function TextField(options: FieldOptions<string> & { maxLength?: number }) {
  const maxLength = options.maxLength ?? 200;
  return field(options, { type: 'string', description: options.description, minLength: 1, maxLength }, (value) => {
    if (typeof value !== 'string') return 'must be a string';
    if (value.length === 0) return 'must not be empty';
    if (codePoints(value) > maxLength) return `must be at most ${maxLength} characters long`;
    return undefined;
  });
}

function codePoints(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}

/**
 * An identifier of a platform resource (order, product, customer, batch): an opaque, non-empty
 * string. Its format belongs to the platform, not to Hookline, so only the length is limited.
 */
export function IdField(options: FieldOptions<string>) {
  return TextField({ ...options, maxLength: 128 });
}

/** A non-negative integer (a count, a quantity) or one at least `minimum`. */
export function CountField(options: FieldOptions<number> & { minimum?: number }) {
  const minimum = options.minimum ?? 0;
  return field(options, { type: 'integer', description: options.description, minimum, maximum: Number.MAX_SAFE_INTEGER }, (value) =>
    integerProblem(value, minimum),
  );
}

/** A money amount: a non-negative integer in minor currency units. */
export function AmountField(options: FieldOptions<number>) {
  return field(options, { type: 'integer', description: options.description, minimum: 0, maximum: Number.MAX_SAFE_INTEGER }, (value) =>
    integerProblem(value, 0),
  );
}

function integerProblem(value: unknown, minimum: number): string | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be an integer';
  if (value < minimum) return minimum === 0 ? 'must not be negative' : `must be at least ${minimum}`;
  if (!Number.isSafeInteger(value)) return `must be at most ${Number.MAX_SAFE_INTEGER}`;
  return undefined;
}

const CURRENCY = /^[A-Z]{3}$/;

/** An ISO 4217 currency code: three upper-case letters. */
export function CurrencyField(options: Partial<FieldOptions<string>> = {}) {
  const description = options.description ?? 'Currency code, ISO 4217: three upper-case letters.';
  return field({ example: 'EUR', ...options, description }, { type: 'string', description, pattern: CURRENCY.source }, (value) => {
    if (typeof value !== 'string') return 'must be a string';
    return CURRENCY.test(value) ? undefined : 'must be a three-letter ISO 4217 currency code in upper case, such as EUR';
  });
}

/** One of a fixed list of UPPER_CASE values. */
export function EnumField<const V extends string>(options: FieldOptions<V> & { values: readonly V[] }) {
  const { values } = options;
  return field(options, { type: 'string', description: options.description, enum: values }, (value) => {
    if (typeof value !== 'string') return 'must be a string';
    return (values as readonly string[]).includes(value) ? undefined : `must be one of ${values.join(', ')}`;
  });
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * Whether a string is a timestamp as Hookline writes them; the check of `format: date-time` in
 * the event schemas too, so that publishing and the schema agree.
 */
export function isTimestamp(value: string): boolean {
  // The round trip also rejects dates that do not exist, such as 2026-02-30.
  return TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value)) && new Date(value).toISOString() === value;
}

/** An ISO 8601 UTC timestamp with milliseconds, as everywhere in Hookline. */
export function TimestampField(options: FieldOptions<string>) {
  return field(options, { type: 'string', description: options.description, format: 'date-time', pattern: TIMESTAMP.source }, (value) => {
    if (typeof value !== 'string') return 'must be a string';
    return isTimestamp(value) ? undefined : 'must be an ISO 8601 UTC timestamp with milliseconds, such as 2026-11-22T10:00:00.000Z';
  });
}

/** Whether a string is an email address; the check of `format: email` in the event schemas too. */
export function isEmailAddress(value: string): boolean {
  return value.length <= 254 && isEmail(value);
}

/** An email address (RFC 5321 limits its length to 254 characters). */
export function EmailField(options: FieldOptions<string>) {
  return field(options, { type: 'string', description: options.description, format: 'email', maxLength: 254 }, (value) => {
    if (typeof value !== 'string') return 'must be a string';
    return isEmailAddress(value) ? undefined : 'must be an email address';
  });
}

const E164 = /^\+[1-9]\d{6,14}$/;

/** A phone number in E.164 form (`+4915112345678`), the one form every receiver can parse. */
export function PhoneField(options: FieldOptions<string>) {
  return field(options, { type: 'string', description: options.description, pattern: E164.source }, (value) => {
    if (typeof value !== 'string') return 'must be a string';
    return E164.test(value) ? undefined : 'must be a phone number in E.164 form, such as +4915112345678';
  });
}

/** A list of nested objects of one class, validated like the top level (strictly). */
export function ObjectListField<T extends object>(
  options: FieldOptions<T[]> & { of: () => DataClass<T>; minItems: number; maxItems: number },
) {
  const { of, minItems, maxItems, description } = options;
  const schema: PropertySchema = { type: 'array', description, minItems, maxItems };
  // `items` (the nested schema) is filled in lazily by describeShape: the class may not exist yet.
  return field(
    options,
    schema,
    (value) => {
      if (!Array.isArray(value)) return 'must be an array';
      if (value.length < minItems) return `must have at least ${minItems} item${minItems === 1 ? '' : 's'}`;
      if (value.length > maxItems) return `must have at most ${maxItems} items`;
      const bad = value.findIndex((item) => !isPlainObject(item));
      return bad < 0 ? undefined : `[${bad}] must be an object`;
    },
    of,
  );
}

// ---------------------------------------------------------------------------------------------
// Reading a shape

function fieldsOf(dataClass: DataClass): FieldSpec[] {
  const chain: FieldSpec[][] = [];
  for (let current: unknown = dataClass; typeof current === 'function' && current !== Function.prototype;) {
    chain.unshift(FIELDS.get(current) ?? []);
    current = Object.getPrototypeOf(current);
  }
  return chain.flat();
}

/** The JSON-Schema-like description of a data class, derived from its field decorators. */
export function describeShape(dataClass: DataClass): ShapeSchema {
  const fields = fieldsOf(dataClass);
  if (fields.length === 0) throw new TypeError(`${dataClass.name} declares no fields`);
  const properties: Record<string, PropertySchema> = {};
  for (const spec of fields) {
    properties[spec.name] = spec.items ? { ...spec.schema, items: describeShape(spec.items()) } : { ...spec.schema };
  }
  return {
    type: 'object',
    properties,
    required: fields.filter((spec) => !spec.optional).map((spec) => spec.name),
    additionalProperties: false,
  };
}

// ---------------------------------------------------------------------------------------------
// Validating against a shape

/**
 * Checks `data` against a data class strictly: every required field present, every value of the
 * right type and range, no field the class does not declare, nested objects likewise. Returns one
 * message per problem, each naming the field by its path (`data.stops[0].orderId is required`);
 * empty when `data` is valid.
 *
 * class-transformer only instantiates the classes here (no `enableImplicitConversion`, no
 * `@Type(() => Number)`): it must never turn "12" into 12, because what is validated is what
 * gets delivered, byte for byte.
 */
export function validateShape(dataClass: DataClass, data: unknown, path = 'data'): string[] {
  if (!isPlainObject(data)) return [`${path} must be an object`];
  const instance = plainToInstance(dataClass, data, { enableImplicitConversion: false, exposeDefaultValues: false });
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: true });
  const problems = new Set(errors.flatMap((error) => messagesOf(error, path)));
  // class-transformer silently drops keys such as `__proto__`, `constructor` or `toString`, so the
  // whitelist never sees them; but they would still be delivered. Compare the raw keys as well.
  for (const problem of unknownKeys(dataClass, data, path)) problems.add(problem);
  return [...problems];
}

function messagesOf(error: ValidationError, parentPath: string): string[] {
  const path =
    /^\d+$/.test(error.property) && Array.isArray(error.target) ? `${parentPath}[${error.property}]` : `${parentPath}.${error.property}`;
  const constraints = error.constraints ?? {};
  const own = Object.entries(constraints).flatMap(([name, message]) => {
    // A list's check names its bad item itself: "[1] must be an object".
    if (name === FIELD_CONSTRAINT) return [message.startsWith('[') ? `${path}${message}` : `${path} ${message}`];
    if (name === 'whitelistValidation') return [`${path} is not allowed`];
    // "nested property … must be either object or array": the field's own check already said so.
    if (name === 'nestedValidation') return [];
    return [`${path} ${message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message}`];
  });
  return [...own, ...(error.children ?? []).flatMap((child) => messagesOf(child, path))];
}

function unknownKeys(dataClass: DataClass, data: Record<string, unknown>, path: string): string[] {
  const fields = new Map(fieldsOf(dataClass).map((spec) => [spec.name, spec]));
  return Object.keys(data).flatMap((key) => {
    const spec = fields.get(key);
    if (!spec) return [`${path}.${key} is not allowed`];
    const value = data[key];
    if (!spec.items || !Array.isArray(value)) return [];
    const itemClass = spec.items();
    return value.flatMap((item: unknown, index) => (isPlainObject(item) ? unknownKeys(itemClass, item, `${path}.${key}[${index}]`) : []));
  });
}
