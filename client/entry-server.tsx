// The React half of server rendering: runs the route's loader, picks status and head, and renders
// the app to a Node stream. server/site/page-server.ts does the HTTP half (template, caching, headers).
import { StrictMode } from 'react';
import { renderToPipeableStream } from 'react-dom/server';
import { createStaticHandler, createStaticRouter, StaticRouterProvider } from 'react-router-dom';
import type { Writable } from 'node:stream';
import { DYNAMIC_QUERY, headOf, type PageHead } from '../shared/head.ts';
import type { PageDataSource } from '../content/page-data.ts';
import { createRoutes } from './routes.tsx';

// One static handler per data source (in practice one per server), built on first use.
const handlers = new WeakMap<PageDataSource, ReturnType<typeof createStaticHandler>>();
function handlerFor(pageData: PageDataSource) {
  let handler = handlers.get(pageData);
  if (!handler) {
    handler = createStaticHandler(createRoutes(pageData));
    handlers.set(pageData, handler);
  }
  return handler;
}

export interface AppRender {
  status: number;
  head: PageHead;
  /** Key under which this exact output may be reused, or null when it depends on the request. */
  cacheKey: string | null;
  /** Route data for hydration, as JSON; null when the page must not hydrate (error pages). */
  hydrationJson: string | null;
  /** Starts writing the app's HTML into `destination`; resolves when it has all been written. */
  pipe(destination: Writable): void;
  abort(reason?: unknown): void;
}

export interface RenderOptions {
  /** Wait for every suspense boundary before the first byte (crawlers, cached pages). */
  waitForAll: boolean;
  onError?: (error: unknown) => void;
  /** Where the route loaders read the content (the server passes it, so this bundle holds no week). */
  pageData: PageDataSource;
}

const FALLBACK_HEAD: PageHead = { title: 'Launched Weekly', description: '', indexable: false };

/**
 * The page asked for: what React Router's static handler reads of a GET request (its method, URL
 * and abort signal; the loaders read the URL). Not a Fetch `Request`: the first one made in a
 * process loads Node's whole fetch implementation (undici), a noticeable part of every server
 * start before the first page could be answered, for three fields.
 */
export interface PageRequest {
  method: 'GET';
  url: string;
  signal: AbortSignal;
}

export async function renderApp(request: PageRequest, options: RenderOptions): Promise<AppRender> {
  const handler = handlerFor(options.pageData);
  // The handler's type asks for a Fetch Request; on a GET it reads only the fields above (a
  // POST, which would need the rest, never reaches the renderer: pages are GET and HEAD only).
  const context = await handler.query(request as Request);
  // A Response instead of a context (a loader's redirect) is told apart without naming the
  // global Response, which would load fetch all the same.
  if (!('loaderData' in context)) {
    // No route redirects today; treat any Response as an error rather than a page.
    throw new Error(`Route answered with a raw response (${context.status})`);
  }
  const router = createStaticRouter(handler.dataRoutes, context);
  const failed = context.errors !== null;
  const routeHead = headOf(
    context.matches.map((match) => ({ handle: match.route.handle, data: context.loaderData[match.route.id] })),
  );
  const status = failed ? (context.statusCode >= 400 ? context.statusCode : 500) : (routeHead?.status ?? 200);
  const url = new URL(request.url);
  // Every 404 is the same page (an unknown address, or a week that does not exist).
  const cacheKey = failed || DYNAMIC_QUERY.some((name) => url.searchParams.has(name)) ? null : status === 404 ? 'not-found' : url.pathname;
  const hydrationJson = failed
    ? null
    : JSON.stringify({ loaderData: context.loaderData, actionData: context.actionData, errors: null }).replace(/</g, '\\u003c');

  return new Promise<AppRender>((resolve, reject) => {
    let settled = false;
    const ready = () => {
      if (settled) return;
      settled = true;
      resolve({
        status,
        head: failed ? FALLBACK_HEAD : routeHead?.head ?? FALLBACK_HEAD,
        cacheKey,
        hydrationJson,
        pipe: (destination) => stream.pipe(destination),
        abort: (reason) => stream.abort(reason),
      });
    };
    const stream = renderToPipeableStream(
      <StrictMode>
        <StaticRouterProvider router={router} context={context} hydrate={false} />
      </StrictMode>,
      {
        onShellReady: options.waitForAll ? undefined : ready,
        onAllReady: options.waitForAll ? ready : undefined,
        onShellError: (error) => {
          settled = true;
          reject(error);
        },
        onError: (error) => options.onError?.(error),
      },
    );
  });
}
