// /rss.xml, /sitemap.xml and /robots.txt. Their bodies depend only on the public weeks and
// SITE_URL, so each is built once per set of public weeks (server/site/public-weeks.ts); no cache may
// keep one past the moment the next week becomes public.
import express, { type Router } from 'express';
import { buildRobotsTxt, buildRssFeed, buildSitemap, FEED_PATH, ROBOTS_PATH, SITEMAP_PATH } from '../feeds.ts';
import type { Recap } from '../../../content/schema.ts';
import { cappedMaxAge } from '../public-weeks.ts';

export interface FeedDocuments {
  /** Built when first asked for, then kept: the feed library is loaded only then (server/site/feeds.ts). */
  rss: () => Promise<string>;
  sitemap: string;
}

export function buildFeedDocuments(recaps: readonly Recap[], siteUrl: string): FeedDocuments {
  let rss: Promise<string> | undefined;
  return {
    rss: () => {
      if (!rss) {
        rss = buildRssFeed(recaps, siteUrl);
        // A failed build is not kept: the next request tries again.
        rss.catch(() => (rss = undefined));
      }
      return rss;
    },
    sitemap: buildSitemap(recaps, siteUrl),
  };
}

export interface FeedsOptions {
  siteUrl: string;
  /** The documents of the weeks public now, and the seconds until the next one is. */
  current: () => { documents: FeedDocuments; secondsToNext: number | null };
}

/** An hour: long enough to spare the server from polling readers, short enough that Monday's recap shows up the same morning. */
const MAX_AGE_SECONDS = 3600;

export function feedsRouter({ siteUrl, current }: FeedsOptions): Router {
  const robots = buildRobotsTxt(siteUrl);
  const documents = [
    { path: FEED_PATH, type: 'application/rss+xml; charset=utf-8', body: (docs: FeedDocuments) => docs.rss() },
    { path: SITEMAP_PATH, type: 'application/xml; charset=utf-8', body: (docs: FeedDocuments) => Promise.resolve(docs.sitemap) },
    { path: ROBOTS_PATH, type: 'text/plain; charset=utf-8', body: () => Promise.resolve(robots) },
  ];
  const router = express.Router();
  for (const { path, type, body } of documents) {
    // Express answers HEAD from this GET route and 304 from the ETag it derives from the body.
    router.get(path, async (_req, res) => {
      const { documents: docs, secondsToNext } = current();
      const maxAge = path === ROBOTS_PATH ? MAX_AGE_SECONDS : cappedMaxAge(MAX_AGE_SECONDS, secondsToNext);
      res.set({ 'Content-Type': type, 'Cache-Control': `public, max-age=${maxAge}` }).send(await body(docs));
    });
  }
  return router;
}
