import { dirname, join } from 'node:path';
import * as ts from 'typescript';
import { EVENT_CATALOGUE, type EventData, type EventType } from './event-catalogue';

/**
 * Compile-time checks of the typing of EventDataMap: each `@ts-expect-error` below is a compile
 * error as long as its line is wrong, and "unused" (itself an error) the day it is not. ts-jest
 * only transpiles (isolatedModules), so the spec below runs the real type checker on this file.
 */
function publish<T extends EventType>(type: T, data: EventData<T>): { type: T; data: EventData<T> } {
  return { type, data };
}

const order = { id: 'ord_1', orderNumber: '1', status: 'PENDING', total: 100, currency: 'EUR' } as const;

function compileTimeChecks(): void {
  publish('order.created', order);
  publish('order.cancelled', { ...order, status: 'CANCELLED' });
  publish('delivery.completed', { orderId: 'ord_1', orderNumber: '1' });

  // @ts-expect-error: not the shape of an order
  publish('order.created', { wrong: 1 });
  // @ts-expect-error: an unknown field next to a complete order
  publish('order.created', { ...order, wrong: 1 });
  // @ts-expect-error: currency missing
  publish('order.created', { id: 'ord_1', orderNumber: '1', status: 'PENDING', total: 100 });
  // @ts-expect-error: a status outside the list
  publish('order.created', { ...order, status: 'NEW' });
  // @ts-expect-error: an amount as a string
  publish('order.created', { ...order, total: '100' });
  // @ts-expect-error: previousStatus is required on order.status_changed
  publish('order.status_changed', order);
  // @ts-expect-error: a payment's data for an order event
  publish('order.created', EVENT_CATALOGUE['payment.received'].example);
  // @ts-expect-error: not an event type
  publish('order.placed', order);
  // @ts-expect-error: webhook.test is not publishable
  publish('webhook.test', { webhookId: 'wh_1', name: 'n', message: 'm' });
}

function typeErrorsOf(file: string): string[] {
  const configPath = ts.findConfigFile(dirname(file), (path) => ts.sys.fileExists(path), 'tsconfig.json');
  if (!configPath) throw new Error('tsconfig.json not found');
  const { config } = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path)) as { config: unknown };
  const { options } = ts.parseJsonConfigFileContent(config, ts.sys, dirname(configPath));
  const program = ts.createProgram({ rootNames: [file], options: { ...options, noEmit: true } });
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where =
      diagnostic.file && diagnostic.start !== undefined
        ? `${diagnostic.file.fileName}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start).line + 1} `
        : '';
    return where + ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
  });
}

describe('EventData typing', () => {
  it('rejects a wrong payload at compile time (every @ts-expect-error above is a type error)', () => {
    expect(typeof compileTimeChecks).toBe('function');
    expect(typeErrorsOf(join(__dirname, 'event-catalogue.types.spec.ts'))).toEqual([]);
  });

  it('lets a correctly typed payload through', () => {
    expect(publish('stock.low', EVENT_CATALOGUE['stock.low'].example).data.threshold).toBe(5);
  });
});
