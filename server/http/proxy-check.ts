// TRUST_PROXY says how many reverse proxies stand in front of the server. Left at 0 behind one,
// every request seems to come from the proxy: all readers share one signup limit per network
// address (RATE_LIMIT_PER_MINUTE a minute for the whole site) and consent records hold the proxy's
// address. Nothing fails loudly, so once requests show a proxy (X-Forwarded-For or Forwarded on
// most of them, not one stray header) while it is 0, one warning names the variable, and a notice
// is recorded in the store for the operator's report. A server with TRUST_PROXY set clears that notice on its first proxied
// request, so the report's check passes again once the setting is fixed.
import type { Request } from 'express';
import type { Logger } from './logger.ts';
import type { SiteStore } from '../store/types.ts';

export const TRUST_PROXY_WARNING =
  'TRUST_PROXY is 0, but most requests arrive with an X-Forwarded-For or Forwarded header: a reverse proxy seems to be in front of this server. ' +
  "Every reader then appears as the proxy's network address, so all readers share one signup limit (RATE_LIMIT_PER_MINUTE a minute for the whole site) " +
  "and consent records hold the proxy's address. To tell whether a proxy is really there: the deployment's own set-up (a load balancer, a platform's router, nginx or Caddy in front), " +
  'or every request carrying the header with the same peer address (the proxy). If so, set TRUST_PROXY to the number of proxies in front (usually 1). ' +
  'If not, leave it at 0: with TRUST_PROXY set and no proxy in front, any client chooses its own address by sending the header, and so passes the per-address signup limits.';

/**
 * A real proxy puts the header on every request; a client or a scanner sends it now and then. The
 * notice waits for this many proxied requests, at least half of all seen, so one stray header
 * never turns the report's check red.
 */
export const PROXIED_REQUESTS_FOR_NOTICE = 5;

const carriesProxyHeaders = (headers: Record<string, unknown>) => headers['x-forwarded-for'] !== undefined || headers.forwarded !== undefined;

/** Looks at each request's headers (server/app.ts runs it first); never answers one. */
export function proxyCheck({ trustProxy, logger, store }: { trustProxy: number; logger: Logger; store: Pick<SiteStore, 'recordServerNotice' | 'clearServerNotice'> }): (req: Request) => void {
  let decided = false;
  let requests = 0;
  let proxied = 0;
  return (req) => {
    if (decided) return;
    requests++;
    if (!carriesProxyHeaders(req.headers)) return;
    proxied++;
    if (trustProxy > 0) {
      decided = true;
      store.clearServerNotice('trust-proxy').catch((error: unknown) => logger.error({ err: error }, 'the TRUST_PROXY notice could not be cleared'));
      return;
    }
    if (proxied < PROXIED_REQUESTS_FOR_NOTICE || proxied * 2 < requests) return;
    decided = true;
    logger.warn({ variable: 'TRUST_PROXY' }, TRUST_PROXY_WARNING);
    store.recordServerNotice('trust-proxy', TRUST_PROXY_WARNING).catch((error: unknown) => logger.error({ err: error }, 'the TRUST_PROXY notice could not be stored for the report'));
  };
}
