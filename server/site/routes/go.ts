// GET /go/{week's page slug}/{rank|page}: the e-mail's link to a launch (or to the recap's page)
// through the site. It answers 302 to exactly the URL the e-mail linked to before (content/go-links.ts)
// and counts the click for the week and the entry, with no reader identified. Anything else is the
// site's 404, never a redirect elsewhere: an unknown week or entry, a query string (so no address
// can be smuggled in), and a week not public yet, which acts as if it did not exist.
//
// What is not counted (docs/clicks.md): HEAD requests, robots by the isbot list, prefetches, a
// repeat of the same week and entry from one client address within CLICK_WINDOW_SECONDS, and
// anything past CLICKS_PER_NETWORK_PER_WEEK of one week and entry from one network (an IPv4
// address, an IPv6 /48). The window is kept in the database as a keyed hash of address, week and
// entry, removed by housekeeping once it has passed, so every replica and a restarted server share
// it. The cap is a counter in the signup limits' counter store; a client past it still gets its
// redirect, and writes nothing but that counter.
import { createHmac, createSecretKey } from 'node:crypto';
import express, { type Request, type Response, type Router } from 'express';
import { isbot } from 'isbot';
import { goDestination } from '../../../content/go-links.ts';
import type { Recap } from '../../../content/schema.ts';
import { networkAddressKey, routedNetworkKey } from '../../http/network-address-key.ts';
import type { Logger } from '../../http/logger.ts';
import type { SiteStore } from '../../store/types.ts';

/** A reader who clicks the same launch again within ten minutes is one click; a day later it is two. */
export const CLICK_WINDOW_SECONDS = 600;
/**
 * Requests of one week and entry from one network that may count within a week, repeats inside
 * the window included (the cap is checked first, so a client past it costs no other write). Enough
 * for a household or a small office behind one address; a script on one address, or rotating
 * through its /48, moves a launch's count by this much and no more.
 */
export const CLICKS_PER_NETWORK_PER_WEEK = 10;
const CAP_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

export interface GoLinksOptions {
  store: Pick<SiteStore, 'recordLinkClick' | 'hitRateLimit'>;
  /** The week with this page path, and whether it is public now (server/site/public-weeks.ts). */
  weekAt: (path: string) => Recap | undefined;
  isPublicNow: (recap: Recap) => boolean;
  clock: () => Date;
  siteUrl: string;
  /** UNSUBSCRIBE_SECRET: the window's hashes are keyed with a key derived from it under its own label. */
  secret: string;
  logger: Logger;
}

/** Requests that are not a reader's click: HEAD, robots, and a browser's speculative prefetch. */
function notAClick(req: Request): boolean {
  if (req.method !== 'GET') return true;
  if (isbot(req.get('user-agent') ?? '')) return true;
  const purpose = `${req.get('sec-purpose') ?? ''} ${req.get('purpose') ?? ''} ${req.get('x-purpose') ?? ''}`;
  return /prefetch|preview/i.test(purpose);
}

export function goLinksRouter({ store, weekAt, isPublicNow, clock, siteUrl, secret, logger }: GoLinksOptions): Router {
  const key = createSecretKey(createHmac('sha256', secret).update('launched-weekly key\0link click window').digest());
  const clickKey = (ip: string, week: string, entry: string) =>
    createHmac('sha256', key).update(`${networkAddressKey(ip)}\0${week}\0${entry}`).digest('base64url');
  // Its own label, so a cap's key can never equal a signup limit's in the shared counter table.
  const capKey = (ip: string, week: string, entry: string) =>
    `click-cap:${createHmac('sha256', key).update(`cap\0${routedNetworkKey(ip)}\0${week}\0${entry}`).digest('base64url')}`;

  async function countClick(ip: string, week: string, entry: string): Promise<void> {
    const capped = await store.hitRateLimit(capKey(ip, week, entry), 1, CAP_WINDOW_MS, false);
    if (capped.points > CLICKS_PER_NETWORK_PER_WEEK) return;
    await store.recordLinkClick({ recapDate: week, entry, clickKey: clickKey(ip, week, entry), at: clock(), windowSeconds: CLICK_WINDOW_SECONDS });
  }
  const router = express.Router();

  router.get('/go/:slug/:entry', async (req: Request<{ slug: string; entry: string }>, res: Response, next) => {
    const week = req.originalUrl.includes('?') ? undefined : weekAt(`/${req.params.slug}`);
    const destination = week && isPublicNow(week) ? goDestination(week, req.params.entry, siteUrl) : null;
    if (!week || !destination) {
      next();
      return;
    }
    if (!notAClick(req)) {
      try {
        await countClick(req.ip ?? '', week.date, req.params.entry);
      } catch (error) {
        // The reader still gets to the launch; only the count misses this click.
        logger.warn({ err: error, week: week.date, entry: req.params.entry }, 'a /go/ click could not be counted');
      }
    }
    // Every click has to reach the server to be counted, and no index should list the link itself.
    res.set({ 'Cache-Control': 'no-store', 'X-Robots-Tag': 'noindex' });
    res.redirect(302, destination);
  });

  return router;
}
