import type { OpenAPIObject } from '@nestjs/swagger';

/** Keys whose values are sample data, not schemas: their contents are left as they are. */
const DATA_KEYS = new Set(['example', 'examples', 'default', 'enum', 'const']);

/**
 * Turns the OpenAPI 3.0 document that @nestjs/swagger builds into OpenAPI 3.1, whose schemas are
 * JSON Schema 2020-12 (needed for the `webhooks` section): `nullable: true` becomes a `type` list
 * with "null" (and null among an `enum`'s values), or an `anyOf` with `{type: 'null'}` around a
 * `$ref` or a composition. Changes the document in place and returns it.
 */
export function toOpenApi31<T extends OpenAPIObject>(document: T): T {
  convert(document);
  document.openapi = '3.1.0';
  return document;
}

function convert(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) convert(item);
    return;
  }
  if (typeof node !== 'object' || node === null) return;
  const object = node as Record<string, unknown>;
  for (const [key, value] of Object.entries(object)) {
    if (!DATA_KEYS.has(key)) convert(value);
  }
  if (!('nullable' in object)) return;
  const nullable = object.nullable === true;
  delete object.nullable;
  if (!nullable) return;
  if (typeof object.type === 'string') {
    object.type = [object.type, 'null'];
    if (Array.isArray(object.enum) && !object.enum.includes(null)) object.enum = [...(object.enum as unknown[]), null];
  } else if (Array.isArray(object.type)) {
    if (!object.type.includes('null')) object.type = [...(object.type as unknown[]), 'null'];
  } else {
    // A $ref or a composition: the schema itself, or null. Annotations stay outside.
    const { description, example, title, ...schema } = object;
    for (const key of Object.keys(object)) delete object[key];
    Object.assign(object, { ...(title === undefined ? {} : { title }), ...(description === undefined ? {} : { description }) });
    object.anyOf = [schema, { type: 'null' }];
    if (example !== undefined) object.example = example;
  }
}
