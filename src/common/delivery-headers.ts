import { BadRequestException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/** The event id headers of a delivery: the Standard Webhooks one and the X-Webhook-* one. */
export const DELIVERY_ID_HEADERS = ['webhook-id', 'x-webhook-id'] as const;
/** The signature headers beside them. */
export const DELIVERY_SIGNATURE_HEADERS = ['webhook-signature', 'x-webhook-signature'] as const;

/**
 * Refuses (400) a request that carries a webhook delivery's own headers, an event id together
 * with a signature: Hookline's deliveries are never calls of its own API, even through a relay
 * that forwards them, so a store cannot make two endpoints restart each other's deliveries
 * (docs/reliability.md#loops-through-hookline-itself). Only the pair counts, so a client that
 * sends one such header for its own reasons is not refused.
 */
export function rejectDeliveryHeaders(req: Request, _res: Response, next: NextFunction): void {
  const id = DELIVERY_ID_HEADERS.find((name) => req.headers[name] !== undefined);
  const signature = id && DELIVERY_SIGNATURE_HEADERS.find((name) => req.headers[name] !== undefined);
  if (!id || !signature) return next();
  next(
    new BadRequestException([
      `The request carries a webhook delivery's headers (${id}, ${signature}): Hookline's API does not accept its own deliveries, so an endpoint cannot call it`,
    ]),
  );
}
