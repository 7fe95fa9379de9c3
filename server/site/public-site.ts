// Everything the site shows of its weeks (pages, page data, RSS, sitemap, share cards), built from
// the weeks public at the time of each request (server/site/public-weeks.ts). One page server, page
// data source and pair of feeds per set of public weeks: a week turns public with no restart, and
// no cache of ours serves the set before it once its time has come.
import { posix } from 'node:path';
import type { RequestHandler, Router } from 'express';
import { createPageData, type PageDataSource } from '../../content/page-data.ts';
import type { Recap } from '../../content/schema.ts';
import { createPageServer, type Renderer } from './page-server.ts';
import { buildFeedDocuments, feedsRouter, type FeedDocuments } from './routes/feeds.ts';
import { pageDataRouter } from './routes/page-data-json.ts';
import { publishedSite, type PublishedSite, type Publishing } from './public-weeks.ts';

export interface SiteSet {
  pageData: PageDataSource;
  knownPaths: ReadonlySet<string>;
  servePage: ReturnType<typeof createPageServer>;
  feeds: FeedDocuments;
}

/** Every page path of a set of weeks: home, archive, about and one per week. */
export function pathsOf(recaps: readonly Pick<Recap, 'path'>[]): ReadonlySet<string> {
  return new Set(['/', '/archive', '/about', ...recaps.map((recap) => recap.path)]);
}

export interface PublicSiteOptions {
  publishing: Publishing;
  renderer: Renderer;
  siteUrl: string;
  onRenderError: (error: unknown) => void;
}

export interface PublicSite {
  site: PublishedSite<SiteSet>;
  feeds: Router;
  pageData: Router;
  /** Answers 404 for the share card of a week that is not public yet; passes everything else on. */
  shareCards: RequestHandler;
  pages: RequestHandler;
}

const SHARE_CARD = /^\/share\/(\d{4}-\d{2}-\d{2})\.png$/;

/**
 * A path as the static file server (express.static, through `send`) resolves it: percent-decoded,
 * then joined to its root, which collapses `//`, `.` and `..`. The card's publication check must
 * see the same file, or `/share//D.png` and `/share/%32…` would serve a coming week's card early.
 * Null for a path `send` refuses itself (bad percent-encoding).
 */
function asStaticFile(path: string): string | null {
  try {
    return posix.normalize(decodeURIComponent(path));
  } catch {
    return null;
  }
}

export function publicSite({ publishing, renderer, siteUrl, onRenderError }: PublicSiteOptions): PublicSite {
  const site = publishedSite<SiteSet>(publishing, (recaps) => {
    const { source } = createPageData(recaps);
    const knownPaths = pathsOf(recaps);
    return {
      pageData: source,
      knownPaths,
      servePage: createPageServer({ renderer, siteUrl, knownPaths, pageData: source, onRenderError }),
      feeds: buildFeedDocuments(recaps, siteUrl),
    };
  });
  return {
    site,
    feeds: feedsRouter({
      siteUrl,
      current: () => {
        const { site: set, secondsToNext } = site.current();
        return { documents: set.feeds, secondsToNext };
      },
    }),
    pageData: pageDataRouter(() => site.current().site.pageData),
    shareCards: (req, res, next) => {
      const file = asStaticFile(req.path);
      const date = file === null ? undefined : SHARE_CARD.exec(file)?.[1];
      const week = date === undefined ? undefined : site.weekOn(date);
      if (!week || site.isPublicNow(week)) {
        next();
        return;
      }
      // Revalidated on every use, so the card appears the moment its week does.
      res.status(404).set('Cache-Control', 'no-cache').type('text').send('There is no such image.');
    },
    pages: async (req, res, next) => {
      try {
        await site.current().site.servePage(req, res);
      } catch (error) {
        next(error);
      }
    },
  };
}
