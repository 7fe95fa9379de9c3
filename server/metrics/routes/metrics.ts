// GET /metrics: the figures in Prometheus' text format, to a scraper that sends
// `Authorization: Bearer <METRICS_TOKEN>`. Mounted only when METRICS_TOKEN is set (server/app.ts),
// so without it the path is the site's ordinary 404. The store is read once per scrape under a time
// bound: a slow database answers 503 at once rather than holding the scraper (and a connection).
import { createHash, timingSafeEqual } from 'node:crypto';
import { Router } from 'express';
import type { Logger } from '../../http/logger.ts';
import { sendError } from '../../http/errors.ts';
import type { MetricsStore } from '../../store/metrics.ts';
import type { Figures } from '../figures.ts';

/** How long a scrape waits for the store; under Prometheus' default scrape timeout (10 s). */
export const METRICS_STORE_TIMEOUT_MS = 5_000;

export interface MetricsRouteOptions {
  token: string;
  store: MetricsStore;
  figures: Figures;
  logger: Logger;
  storeTimeoutMs?: number;
}

// Hashing first gives both sides one length, so the comparison's time says nothing about the token.
const digest = (value: string) => createHash('sha256').update(value).digest();

function bearerMatches(header: string | undefined, expected: Buffer): boolean {
  const presented = /^Bearer +(\S+) *$/i.exec(header ?? '')?.[1] ?? '';
  return timingSafeEqual(digest(presented), expected);
}

class ScrapeTimeout extends Error {}

function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ScrapeTimeout(`the store did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

export function metricsRouter({ token, store, figures, logger, storeTimeoutMs = METRICS_STORE_TIMEOUT_MS }: MetricsRouteOptions): Router {
  const expected = digest(token);
  const router = Router();
  router.get('/metrics', async (req, res) => {
    res.set('Cache-Control', 'no-store');
    if (!bearerMatches(req.get('Authorization'), expected)) {
      res.set('WWW-Authenticate', 'Bearer realm="metrics"');
      return sendError(res, 401, 'unauthorized', 'Send METRICS_TOKEN as "Authorization: Bearer <token>".');
    }
    try {
      figures.show(await within(store.metricsSnapshot(), storeTimeoutMs));
    } catch (error) {
      logger.warn({ err: error }, 'metrics: the store could not be read');
      return sendError(res, 503, 'unavailable', error instanceof ScrapeTimeout ? 'The database is slow to answer; try the next scrape.' : 'The database cannot be reached.');
    }
    res.type(figures.registry.contentType).send(await figures.registry.metrics());
  });
  return router;
}
