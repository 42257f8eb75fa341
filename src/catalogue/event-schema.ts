import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import { describeShape, isEmailAddress, isTimestamp, type DataClass, type PropertySchema, type ShapeSchema } from './data-shape';

/** The JSON Schema dialect of the event schemas (the one OpenAPI 3.1 uses). */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** A JSON Schema (2020-12) as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * The JSON Schema (2020-12) of a data class, derived from the same field declarations that
 * validation and the OpenAPI components use, so the three cannot drift apart. Differs from
 * {@link describeShape} only where OpenAPI 3.0 and JSON Schema differ: a nullable value's `type`
 * is a list with "null".
 */
export function jsonSchemaOf(dataClass: DataClass): JsonSchema {
  return objectSchema(describeShape(dataClass));
}

function objectSchema(shape: ShapeSchema): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, property] of Object.entries(shape.properties)) properties[name] = propertySchema(property);
  return { type: 'object', properties, required: [...shape.required], additionalProperties: false };
}

function propertySchema(property: PropertySchema): JsonSchema {
  const { nullable, items, enum: values, ...rest } = property;
  const schema: JsonSchema = { ...rest };
  if (values) schema.enum = nullable ? [...values, null] : [...values];
  if (items) schema.items = objectSchema(items);
  if (nullable) schema.type = [property.type, 'null'];
  return schema;
}

/**
 * An Ajv (2020-12) whose `date-time` and `email` formats are the very checks publishing uses,
 * so Hookline's verdict on a payload is the schema's.
 */
export function createSchemaValidator(): Ajv2020 {
  return new Ajv2020({
    allErrors: true,
    strict: true,
    formats: {
      'date-time': { type: 'string', validate: isTimestamp },
      email: { type: 'string', validate: isEmailAddress },
    },
  });
}

/** Compiles a schema once for the lifetime of the process; Ajv compiles to a function. */
export function compileSchema(schema: JsonSchema): ValidateFunction {
  return createSchemaValidator().compile(schema);
}

/**
 * Ajv's errors in the words of Hookline's other validation messages, each naming the field by
 * its path (`data.stops[0].orderId is required`, `data.extra is not allowed`).
 */
export function schemaProblems(errors: readonly ErrorObject[] | null | undefined, root = 'data'): string[] {
  const problems = (errors ?? []).map((error) => {
    const path = root + pointerToPath(error.instancePath);
    const params = error.params as { missingProperty?: string; additionalProperty?: string };
    if (error.keyword === 'required') return `${path}.${params.missingProperty} is required`;
    if (error.keyword === 'additionalProperties') return `${path}.${params.additionalProperty} is not allowed`;
    return `${path} ${error.message ?? 'is invalid'}`;
  });
  return [...new Set(problems)];
}

function pointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((token) => (/^\d+$/.test(token) ? `[${token}]` : `.${token}`))
    .join('');
}
