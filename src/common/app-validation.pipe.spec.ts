import { ArgumentMetadata, BadRequestException, ValidationPipe } from '@nestjs/common';
import { IsInt, IsOptional, IsString, MaxLength } from 'class-validator';
import { ListWebhooksQuery } from '../webhooks/dto/list-webhooks.query';
import { AppValidationPipe, prototypeNamedKeys } from './app-validation.pipe';

class NeedsName {
  @IsString()
  name!: string;
}

class NeedsUrl {
  @IsString({ message: 'url must be a string' })
  @MaxLength(10, { message: 'url must be at most 10 characters' })
  url!: string;

  @IsOptional()
  @IsString()
  note?: string;
}

class WithDefault {
  @IsOptional()
  @IsInt()
  limit: number = 50;

  @IsOptional()
  @IsString({ each: true })
  tags: string[] = [];
}

const query = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'query', metatype, data: undefined });
const body = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'body', metatype, data: undefined });

/** The messages of the 400 the pipe answers `value` with. */
async function problems(pipe: ValidationPipe, value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
  try {
    await pipe.transform(value, metadata);
  } catch (error) {
    if (error instanceof BadRequestException) return (error.getResponse() as { message: unknown }).message;
    throw error;
  }
  throw new Error('accepted');
}

describe('AppValidationPipe', () => {
  let pipe: AppValidationPipe;
  let wholePipe: jest.SpyInstance;

  beforeEach(() => {
    pipe = new AppValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true, forbidUnknownValues: true });
    wholePipe = jest.spyOn(ValidationPipe.prototype, 'transform');
  });

  afterEach(() => wholePipe.mockRestore());

  it('answers an empty query of a class that took one with a new instance, without the whole pipe', async () => {
    const first = await pipe.transform({}, query(ListWebhooksQuery));
    const second = await pipe.transform(Object.create(null), query(ListWebhooksQuery));
    expect(first).toBeInstanceOf(ListWebhooksQuery);
    expect(second).toBeInstanceOf(ListWebhooksQuery);
    expect(second).not.toBe(first);
    expect(second).toEqual(first);
    expect(wholePipe).toHaveBeenCalledTimes(1);
  });

  it('still validates every query that is not empty', async () => {
    await pipe.transform({}, query(ListWebhooksQuery));
    await expect(pipe.transform({ limit: '0' }, query(ListWebhooksQuery))).rejects.toBeInstanceOf(BadRequestException);
    await expect(pipe.transform({ unknown: 'x' }, query(ListWebhooksQuery))).rejects.toBeInstanceOf(BadRequestException);
    await expect(pipe.transform({ limit: '5', isActive: 'true' }, query(ListWebhooksQuery))).resolves.toEqual(
      Object.assign(new ListWebhooksQuery(), { limit: 5, isActive: true }),
    );
    expect(wholePipe).toHaveBeenCalledTimes(4);
  });

  it('refuses `{}` every time for a class that requires a field', async () => {
    for (let i = 0; i < 3; i++) await expect(pipe.transform({}, query(NeedsName))).rejects.toBeInstanceOf(BadRequestException);
    expect(wholePipe).toHaveBeenCalledTimes(3);
  });

  it('takes no shortcut for a class whose new instances differ (defaults that are objects)', async () => {
    const first = (await pipe.transform({}, query(WithDefault))) as WithDefault;
    const second = (await pipe.transform({}, query(WithDefault))) as WithDefault;
    expect(second).toEqual({ limit: 50, tags: [] });
    expect(second.tags).not.toBe(first.tags);
    expect(wholePipe).toHaveBeenCalledTimes(2);
  });

  it('hands on an empty object as it came where nothing is validated', async () => {
    const value = {};
    expect(await pipe.transform(value, { type: 'custom', metatype: Object, data: undefined })).toBe(value);
    expect(await pipe.transform(value, { type: 'custom', metatype: Object, data: undefined })).toBe(value);
  });

  it('says a missing field is required, and nothing else about it', async () => {
    expect(await problems(pipe, {}, body(NeedsUrl))).toEqual(['url is required']);
    expect(await problems(pipe, { note: 'x' }, body(NeedsUrl))).toEqual(['url is required']);
    expect(await problems(pipe, undefined, body(NeedsUrl))).toEqual(['url is required']);
  });

  it('still names every rule a present value breaks, null included', async () => {
    expect(await problems(pipe, { url: 42 }, body(NeedsUrl))).toEqual(['url must be at most 10 characters', 'url must be a string']);
    expect(await problems(pipe, { url: null }, body(NeedsUrl))).toEqual(['url must be at most 10 characters', 'url must be a string']);
    expect(await problems(pipe, { url: 'x'.repeat(11) }, body(NeedsUrl))).toEqual(['url must be at most 10 characters']);
  });

  it('leaves optional fields that are absent alone', async () => {
    await expect(pipe.transform({ url: 'https://x' }, body(NeedsUrl))).resolves.toEqual(
      Object.assign(new NeedsUrl(), { url: 'https://x' }),
    );
  });

  it.each(['constructor', '__proto__', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'])(
    'refuses an unknown field named %s like any unknown field, beside the other problems',
    async (name) => {
      const value = JSON.parse(`{"${name}": {"polluted": true}, "note": 5}`) as unknown;
      expect(await problems(pipe, value, body(NeedsUrl))).toEqual([
        `property ${name} should not exist`,
        'url is required',
        'note must be a string',
      ]);
      expect(await problems(pipe, JSON.parse(`{"${name}": "1"}`), query(ListWebhooksQuery))).toEqual([`property ${name} should not exist`]);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
  );
});

describe('prototypeNamedKeys', () => {
  it('finds them at any depth, naming nested ones by their path', () => {
    const value = JSON.parse(
      '{"type":"x","data":{"id":1,"__proto__":{"a":1},"items":[{"ok":1},{"constructor":2}]},"toString":3}',
    ) as unknown;
    expect(prototypeNamedKeys(value)).toEqual([
      'data.__proto__ is not allowed',
      'data.items[1].constructor is not allowed',
      'property toString should not exist',
    ]);
  });

  it('finds nothing in ordinary values, and does not look at values, only keys', () => {
    expect(prototypeNamedKeys({ name: 'constructor', events: ['__proto__'], nested: { deeper: { a: [1, null, 'x'] } } })).toEqual([]);
    expect(prototypeNamedKeys(null)).toEqual([]);
    expect(prototypeNamedKeys('constructor')).toEqual([]);
    expect(prototypeNamedKeys(Object.create(null))).toEqual([]);
  });
});
