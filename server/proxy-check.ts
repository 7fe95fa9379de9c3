// TRUST_PROXY says how many reverse proxies stand in front of the server. Left at 0 behind one,
// every request seems to come from the proxy: all readers share one signup limit per network
// address (RATE_LIMIT_PER_MINUTE a minute for the whole site) and consent records hold the proxy's
// address. Nothing fails loudly, so the first request that shows a proxy (X-Forwarded-For or
// Forwarded) while it is 0 logs one warning naming the variable, and records a notice in the store
// for the operator's report. A server with TRUST_PROXY set clears that notice on its first proxied
// request, so the report's check passes again once the setting is fixed.
import type { Request } from 'express';
import type { Logger } from './logger.ts';
import type { SiteStore } from './store/types.ts';

export const TRUST_PROXY_WARNING =
  'TRUST_PROXY is 0, but a request arrived with an X-Forwarded-For or Forwarded header: a reverse proxy seems to be in front of this server. ' +
  "Every reader then appears as the proxy's network address, so all readers share one signup limit (RATE_LIMIT_PER_MINUTE a minute for the whole site) " +
  "and consent records hold the proxy's address. Set TRUST_PROXY to the number of proxies in front (usually 1).";

const carriesProxyHeaders = (headers: Record<string, unknown>) => headers['x-forwarded-for'] !== undefined || headers.forwarded !== undefined;

/** Looks at each request's headers (server/app.ts runs it first); never answers one. */
export function proxyCheck({ trustProxy, logger, store }: { trustProxy: number; logger: Logger; store: Pick<SiteStore, 'recordServerNotice' | 'clearServerNotice'> }): (req: Request) => void {
  let seen = false;
  return (req) => {
    if (seen || !carriesProxyHeaders(req.headers)) return;
    seen = true;
    if (trustProxy === 0) {
      logger.warn({ variable: 'TRUST_PROXY' }, TRUST_PROXY_WARNING);
      store.recordServerNotice('trust-proxy', TRUST_PROXY_WARNING).catch((error: unknown) => logger.error({ err: error }, 'the TRUST_PROXY notice could not be stored for the report'));
    } else {
      store.clearServerNotice('trust-proxy').catch((error: unknown) => logger.error({ err: error }, 'the TRUST_PROXY notice could not be cleared'));
    }
  };
}
