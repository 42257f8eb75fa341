import { ArgumentMetadata, BadRequestException, ValidationPipe } from '@nestjs/common';
import { IsInt, IsOptional, IsString } from 'class-validator';
import { ListWebhooksQuery } from '../webhooks/dto/list-webhooks.query';
import { AppValidationPipe } from './app-validation.pipe';

class NeedsName {
  @IsString()
  name!: string;
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
});
