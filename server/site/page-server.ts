// Serving pages. Pages are the same for every reader between deploys, so each is rendered once,
// compressed once and kept in memory with its ETag; only requests whose output depends on the
// request (the no-JavaScript signup outcome) are rendered per request, and those stream.
import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { brotliCompress, gzipSync, constants as zlibConstants } from 'node:zlib';
import type { Request as ExpressRequest, Response as ExpressResponse } from 'express';
import { isbot } from 'isbot';
import type { AppRender, PageRequest, RenderOptions } from '../../client/entry-server.tsx';
import { DYNAMIC_QUERY } from '../../shared/head.ts';
import type { PageDataSource } from '../../content/page-data.ts';
import { canonicalPageFor, rawPathOf } from '../http/canonical-path.ts';
import { dataScript, renderHead, splitTemplate } from './html.ts';

export interface Renderer {
  renderApp(request: PageRequest, options: RenderOptions): Promise<AppRender>;
  /** The HTML template; in development Vite re-transforms it for each URL. */
  template(url: string): Promise<string>;
  /** Whether rendered pages may be kept (false in development, where code changes live). */
  cacheable: boolean;
}

interface CachedPage {
  status: number;
  etag: string;
  identity: Buffer;
  gzip: Buffer;
  /** Null until the thread pool has finished it; until then gzip answers. */
  brotli: Buffer | null;
}

const RENDER_TIMEOUT_MS = 10_000;

export interface PageServerOptions {
  renderer: Renderer;
  siteUrl: string;
  /** Paths of real pages; everything else shares one cached 404 page. */
  knownPaths: ReadonlySet<string>;
  /** The route loaders' data, read from the content. */
  pageData: PageDataSource;
  onRenderError: (error: unknown) => void;
  /**
   * A preview of a coming week: every page is rendered per request, kept out of every cache and
   * index (`Cache-Control: private, no-store`, `X-Robots-Tag` and meta robots `noindex`), with this
   * HTML shown above the page.
   */
  preview?: { banner: string };
}

const NOT_FOUND_KEY = 'not-found';
/** No page has this address; the one shared 404 page is rendered from it. */
const NOT_FOUND_RENDER_PATH = '/404';

function pickEncoding(req: ExpressRequest, brotliReady: boolean): 'br' | 'gzip' | null {
  const accepted = brotliReady ? req.acceptsEncodings('br', 'gzip', 'identity') : req.acceptsEncodings('gzip', 'identity');
  return accepted === 'br' || accepted === 'gzip' ? accepted : null;
}

/** A rendered page as it is kept: its ETag and its body, plain, gzipped and (soon) in brotli. */
function cachedPage(status: number, identity: Buffer): CachedPage {
  const page: CachedPage = {
    status,
    etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 32)}"`,
    identity,
    gzip: gzipSync(identity, { level: 9 }),
    brotli: null,
  };
  // Brotli at its best quality is orders of magnitude slower than gzip for a page:
  // done inline it delayed every page's first answer after a start by that much and
  // held the event loop meanwhile. On the thread pool, after the first (gzipped) answer.
  brotliCompress(identity, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }, (error, compressed) => {
    if (!error) page.brotli = compressed;
  });
  return page;
}

function sendCached(req: ExpressRequest, res: ExpressResponse, page: CachedPage) {
  res.status(page.status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('ETag', page.etag);
  res.setHeader('Vary', 'Accept-Encoding');
  if (page.status === 200 && req.headers['if-none-match'] === page.etag) {
    res.status(304).end();
    return;
  }
  const encoding = pickEncoding(req, page.brotli !== null);
  const body = encoding === 'br' ? page.brotli! : encoding === 'gzip' ? page.gzip : page.identity;
  if (encoding) res.setHeader('Content-Encoding', encoding);
  res.setHeader('Content-Length', body.length);
  res.end(req.method === 'HEAD' ? undefined : body);
}

export function createPageServer({ renderer, siteUrl, knownPaths, pageData, onRenderError, preview }: PageServerOptions) {
  const cache = new Map<string, Promise<CachedPage>>();

  async function renderDocument(requestUrl: string, waitForAll: boolean, signal: AbortSignal) {
    const url = new URL(requestUrl, siteUrl);
    const [result, template] = await Promise.all([
      renderer.renderApp({ method: 'GET', url: url.href, signal }, { waitForAll, onError: onRenderError, pageData }),
      renderer.template(url.pathname),
    ]);
    const parts = splitTemplate(template);
    const head = renderHead(result.head, { siteUrl, pathname: url.pathname, noindex: preview !== undefined });
    // Outside the element React hydrates, so the page itself stays exactly as it will be.
    const beforeApp = preview ? parts.beforeApp.replace(/<div id="root">\s*$/, (root) => preview.banner + root) : parts.beforeApp;
    return {
      result,
      opening: parts.beforeHead + head + beforeApp,
      closing: parts.beforeData + dataScript(result.hydrationJson) + parts.afterData,
    };
  }

  async function renderToCache(requestUrl: string, key: string): Promise<CachedPage> {
    const { result, opening, closing } = await renderDocument(requestUrl, true, new AbortController().signal);
    if (result.cacheKey !== key) throw new Error(`${requestUrl} rendered as "${result.cacheKey ?? 'uncacheable'}", not as the page "${key}" it is kept under`);
    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = new Promise<void>((resolve, reject) => {
      sink.on('end', resolve);
      sink.on('error', reject);
    });
    result.pipe(sink);
    await done;
    return cachedPage(result.status, Buffer.concat([Buffer.from(opening), ...chunks, Buffer.from(closing)]));
  }

  async function streamPage(req: ExpressRequest, res: ExpressResponse) {
    const controller = new AbortController();
    const waitForAll = isbot(req.headers['user-agent'] ?? '');
    const { result, opening, closing } = await renderDocument(req.originalUrl, waitForAll, controller.signal);
    const timeout = setTimeout(() => result.abort(new Error('Render timed out')), RENDER_TIMEOUT_MS);
    res.status(result.status);
    res.setHeader('Content-Type', 'text/html; charset=utf-8');
    res.setHeader('Cache-Control', preview ? 'private, no-store' : 'no-store');
    if (preview) {
      res.setHeader('X-Robots-Tag', 'noindex');
      // The address carries the preview token: no page it links to may learn it.
      res.setHeader('Referrer-Policy', 'no-referrer');
    }
    res.write(opening);
    const body = new PassThrough();
    body.on('end', () => {
      clearTimeout(timeout);
      res.end(closing);
    });
    body.pipe(res, { end: false });
    res.on('close', () => {
      if (!res.writableFinished) result.abort(new Error('Client went away'));
    });
    result.pipe(body);
  }

  return async function servePage(req: ExpressRequest, res: ExpressResponse) {
    const rawPath = rawPathOf(req.originalUrl);
    const known = knownPaths.has(rawPath);
    if (!known) {
      const canonical = canonicalPageFor(rawPath, knownPaths);
      if (canonical) {
        res.redirect(301, canonical + req.originalUrl.slice(rawPath.length));
        return;
      }
    }
    const url = new URL(req.originalUrl, siteUrl);
    const dynamic = preview !== undefined || DYNAMIC_QUERY.some((name) => url.searchParams.has(name)) || !renderer.cacheable;
    if (dynamic) {
      await streamPage(req, res);
      return;
    }
    // Keyed by what is rendered, never by the raw path: a known page under its own path, and one
    // 404 page for everything else, always rendered from the same address so no request can
    // leave another page under the 404's key.
    const key = known ? rawPath : NOT_FOUND_KEY;
    let page = cache.get(key);
    if (!page) {
      page = renderToCache(known ? req.originalUrl : NOT_FOUND_RENDER_PATH, key);
      cache.set(key, page);
      // A failed render is not remembered: the next request tries again.
      page.catch(() => cache.delete(key));
    }
    sendCached(req, res, await page);
  };
}
