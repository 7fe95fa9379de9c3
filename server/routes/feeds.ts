// /rss.xml, /sitemap.xml and /robots.txt. Their bodies depend only on the content and SITE_URL,
// which change only with a deploy, so each is built once when the app is created.
import express, { type Router } from 'express';
import { recaps as allRecaps } from '../../content/index.ts';
import type { Recap } from '../../content/schema.ts';
import { buildRobotsTxt, buildRssFeed, buildSitemap, FEED_PATH, ROBOTS_PATH, SITEMAP_PATH } from '../feeds.ts';

export interface FeedsOptions {
  siteUrl: string;
  recaps?: readonly Recap[];
}

/** An hour: long enough to spare the server from polling readers, short enough that Monday's recap shows up the same morning. */
const CACHE_CONTROL = 'public, max-age=3600';

export function feedsRouter({ siteUrl, recaps = allRecaps }: FeedsOptions): Router {
  const documents = [
    { path: FEED_PATH, type: 'application/rss+xml; charset=utf-8', body: buildRssFeed(recaps, siteUrl) },
    { path: SITEMAP_PATH, type: 'application/xml; charset=utf-8', body: buildSitemap(recaps, siteUrl) },
    { path: ROBOTS_PATH, type: 'text/plain; charset=utf-8', body: buildRobotsTxt(siteUrl) },
  ];
  const router = express.Router();
  for (const { path, type, body } of documents) {
    // Express answers HEAD from this GET route and 304 from the ETag it derives from the body.
    router.get(path, (_req, res) => {
      res.set({ 'Content-Type': type, 'Cache-Control': CACHE_CONTROL }).send(body);
    });
  }
  return router;
}
