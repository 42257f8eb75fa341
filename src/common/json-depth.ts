import type { NextFunction, Request, Response } from 'express';

/** Deepest nesting of arrays and objects a JSON body may have (no event data shape comes near it). */
export const MAX_JSON_DEPTH = 32;

/** How deep `value` nests, counted without recursion (the value may be 100,000 levels deep). */
export function jsonDepth(value: unknown, stopAt = Number.POSITIVE_INFINITY): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    const level = depth + 1;
    if (level > deepest) deepest = level;
    if (deepest > stopAt) return deepest;
    for (const child of Object.values(current)) stack.push([child, level]);
  }
  return deepest;
}

/**
 * Refuses a parsed JSON body nested deeper than {@link MAX_JSON_DEPTH} levels with a 400
 * (body-parser's error style, so AllExceptionsFilter answers it). class-transformer and
 * class-validator walk bodies recursively: 20,000 levels, well inside 1 MiB, overflowed the
 * stack into a 500.
 */
export function rejectDeepJson(req: Request, _res: Response, next: NextFunction): void {
  if (req.body !== null && typeof req.body === 'object' && jsonDepth(req.body, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) {
    next(Object.assign(new Error('JSON body nested too deeply'), { type: 'entity.too.deep', status: 400 }));
    return;
  }
  next();
}
