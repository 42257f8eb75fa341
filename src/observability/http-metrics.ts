import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Metrics } from './metrics';

/**
 * Counts and times every request, 404s and rejected bodies included, labelled by the matched
 * route pattern (never the raw URL, whose ids would make the label set unbounded).
 */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const end = metrics.httpDuration.startTimer();
    res.once('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path;
      const labels = { method: req.method, route: route ? `${req.baseUrl}${route}` : 'unmatched', status: String(res.statusCode) };
      metrics.httpRequests.inc(labels);
      end(labels);
    });
    next();
  };
}
