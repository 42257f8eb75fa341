import { ArgumentMetadata, BadRequestException, HttpException, Type, ValidationPipe } from '@nestjs/common';
import type { ValidationError } from 'class-validator';

/**
 * Key names that class-transformer and Nest's pipe drop without a word (`__proto__`,
 * `constructor` and `prototype` are deleted, `toString`, `valueOf`, … are skipped because the
 * instance already has them). No body or query of the API, and no event `data` shape, has such a
 * field, so they are refused like any other unknown field instead of vanishing.
 */
const PROTOTYPE_NAMES: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/**
 * Nest's ValidationPipe, with three changes.
 *
 * A missing required field reads "url is required" rather than every rule the absent value breaks.
 *
 * A field named like an Object.prototype member (`constructor`, `__proto__`, `toString`, …), at any
 * depth, is refused like any unknown field rather than silently dropped.
 *
 * And a shortcut: an empty query or body (`{}`) given to a class that already took one, and gave
 * back a bare instance of itself, gets a new bare instance without class-transformer and
 * class-validator running again. Their answer to `{}` depends only on the class (no validator of
 * ours looks anywhere else), and working it out again costs every request a walk of the class's
 * metadata and a lookup of its rules (docs/scaling.md). Anything else, and a class that refuses
 * `{}` or whose new instances differ, always goes through the whole pipe.
 */
export class AppValidationPipe extends ValidationPipe {
  private readonly takesEmpty = new WeakSet<Type<object>>();

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const metatype: Type<object> | undefined = metadata.metatype;
    if (metatype && this.toValidate(metadata)) {
      // Looked for first: the pipe below deletes some of them from `value` in place.
      const named = prototypeNamedKeys(value);
      if (named.length > 0) throw new BadRequestException([...named, ...(await this.otherProblems(value, metadata))]);
    }
    if (!metatype || !isEmptyPlainObject(value)) return super.transform(value, metadata);
    if (this.takesEmpty.has(metatype)) return new metatype();
    const result: unknown = await super.transform(value, metadata);
    if (result !== value && result instanceof metatype && shallowEqual(result, new metatype())) this.takesEmpty.add(metatype);
    return result;
  }

  protected override flattenValidationErrors(errors: ValidationError[]): string[] {
    return super.flattenValidationErrors(errors.map(reportMissingAsRequired));
  }

  private async otherProblems(value: unknown, metadata: ArgumentMetadata): Promise<string[]> {
    try {
      await super.transform(value, metadata);
      return [];
    } catch (error) {
      if (!(error instanceof HttpException)) throw error;
      const { message } = error.getResponse() as { message?: unknown };
      return Array.isArray(message) ? message.map(String) : [];
    }
  }
}

/**
 * The problems of the keys named like Object.prototype members: at the top, in the words of any
 * unknown property ("property constructor should not exist"); deeper (an event's `data`), in the
 * words of an unknown field of a data shape ("data.constructor is not allowed").
 */
export function prototypeNamedKeys(value: unknown): string[] {
  const problems: string[] = [];
  const visit = (node: unknown, path: string): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      node.forEach((item, index) => visit(item, `${path}[${index}]`));
      return;
    }
    for (const key of Object.keys(node)) {
      const child = path === '' ? key : `${path}.${key}`;
      if (PROTOTYPE_NAMES.has(key)) problems.push(path === '' ? `property ${key} should not exist` : `${child} is not allowed`);
      else visit((node as Record<string, unknown>)[key], child);
    }
  };
  visit(value, '');
  return problems;
}

/**
 * An error of a property that is absent (only a missing field is `undefined` in JSON or a query;
 * optional ones are skipped before any rule runs) says only that it is required.
 */
function reportMissingAsRequired(error: ValidationError): ValidationError {
  if (error.children && error.children.length > 0) return { ...error, children: error.children.map(reportMissingAsRequired) };
  if ('value' in error && error.value === undefined && error.constraints) {
    return { ...error, constraints: { isRequired: `${error.property} is required` } };
  }
  return error;
}

function isEmptyPlainObject(value: unknown): value is Record<string, never> {
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && Object.keys(value).length === 0;
}

/** The same own keys, in the same order, with the same (===) values. */
function shallowEqual(a: object, b: object): boolean {
  const entriesOfA = Object.entries(a);
  const entriesOfB = Object.entries(b);
  return (
    entriesOfA.length === entriesOfB.length && entriesOfA.every(([key, value], i) => key === entriesOfB[i][0] && value === entriesOfB[i][1])
  );
}
