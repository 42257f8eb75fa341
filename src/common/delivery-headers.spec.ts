import { BadRequestException } from '@nestjs/common';
import type { Request, Response } from 'express';
import { rejectDeliveryHeaders } from './delivery-headers';

function run(headers: Record<string, string>): unknown {
  let passed: unknown = 'not called';
  rejectDeliveryHeaders({ headers } as unknown as Request, {} as Response, (error?: unknown) => (passed = error));
  return passed;
}

describe('rejectDeliveryHeaders', () => {
  it.each([
    [{ 'webhook-id': 'evt_1', 'webhook-signature': 'v1,abc' }, 'webhook-id, webhook-signature'],
    [{ 'x-webhook-id': 'evt_1', 'x-webhook-signature': 'sha256=ab' }, 'x-webhook-id, x-webhook-signature'],
    [{ 'webhook-id': 'evt_1', 'x-webhook-signature': 'sha256=ab' }, 'webhook-id, x-webhook-signature'],
    [{ 'x-webhook-id': 'evt_1', 'webhook-signature': '' }, 'x-webhook-id, webhook-signature'],
  ])('refuses %j, naming the headers', (headers, named) => {
    const error = run(headers);
    expect(error).toBeInstanceOf(BadRequestException);
    expect((error as BadRequestException).getResponse()).toMatchObject({
      message: [expect.stringContaining(`delivery's headers (${named})`)],
    });
  });

  it.each<Record<string, string>>([
    {},
    { 'webhook-id': 'evt_1' },
    { 'x-webhook-signature': 'sha256=ab' },
    { 'webhook-timestamp': '1', 'x-api-key': 'k' },
  ])('lets %j through', (headers) => {
    expect(run(headers)).toBeUndefined();
  });
});
