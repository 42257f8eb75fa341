import { UnsupportedMediaTypeException } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/** The media types the JSON body parser reads; every other body would be read as no body at all. */
export const JSON_MEDIA_TYPES = ['application/json', 'application/*+json'];

/**
 * Refuses a request body that is not declared as JSON with a 415 naming `application/json`. The
 * body parser skips such a body, so a form-encoded or text body would reach validation as an
 * empty one and come back as a list of "required" fields, which hides the real mistake
 * (`curl -d` without `-H 'Content-Type: application/json'`). A request without a body (no
 * Transfer-Encoding, Content-Length absent or 0) needs no Content-Type.
 */
export function requireJsonContentType(req: Request, _res: Response, next: NextFunction): void {
  if (!hasBody(req) || req.is(JSON_MEDIA_TYPES)) return next();
  const sent = req.headers['content-type'];
  const described = sent === undefined ? 'no Content-Type' : `Content-Type ${JSON.stringify(sent.slice(0, 100))}`;
  next(new UnsupportedMediaTypeException(`The request body must be JSON sent with Content-Type: application/json (got ${described})`));
}

function hasBody(req: Request): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && Number(length) !== 0;
}
