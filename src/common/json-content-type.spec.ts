import { UnsupportedMediaTypeException } from '@nestjs/common';
import express from 'express';
import type { Request, Response } from 'express';
import { requireJsonContentType } from './json-content-type';

/** What the middleware passes on for a request with these headers (Express's own `req.is`). */
function verdict(headers: Record<string, string>): unknown {
  const req = Object.assign(Object.create(express.request) as Request, { headers });
  let passed: unknown = 'not called';
  requireJsonContentType(req, {} as Response, (error?: unknown) => (passed = error));
  return passed;
}

describe('requireJsonContentType', () => {
  it.each([
    ['application/json', { 'content-type': 'application/json', 'content-length': '2' }],
    ['application/json with a charset', { 'content-type': 'application/json; charset=utf-8', 'content-length': '2' }],
    ['a +json type', { 'content-type': 'application/merge-patch+json', 'content-length': '2' }],
    ['a chunked JSON body', { 'content-type': 'APPLICATION/JSON', 'transfer-encoding': 'chunked' }],
    ['no body at all', {}],
    ['an empty body of another type', { 'content-type': 'text/plain', 'content-length': '0' }],
  ])('lets %s through', (_case, headers) => {
    expect(verdict(headers)).toBeUndefined();
  });

  it.each([
    [
      'a form',
      { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '9' },
      '(got Content-Type "application/x-www-form-urlencoded")',
    ],
    ['text', { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' }, '(got Content-Type "text/plain")'],
    ['a body without a Content-Type', { 'content-length': '2' }, '(got no Content-Type)'],
    ['a Content-Type that does not parse', { 'content-type': 'garbage', 'content-length': '2' }, '(got Content-Type "garbage")'],
  ])('answers %s with a 415 naming application/json', (_case, headers, got) => {
    const error = verdict(headers);
    expect(error).toBeInstanceOf(UnsupportedMediaTypeException);
    expect((error as UnsupportedMediaTypeException).message).toBe(
      `The request body must be JSON sent with Content-Type: application/json ${got}`,
    );
  });
});
