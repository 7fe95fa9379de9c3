// The React half of server rendering: runs the route's loader, picks status and head, and renders
// the app to a Node stream. server/render.ts does the HTTP half (template, caching, headers).
import { StrictMode } from 'react';
import { renderToPipeableStream } from 'react-dom/server';
import { createStaticHandler, createStaticRouter, StaticRouterProvider } from 'react-router-dom';
import type { Writable } from 'node:stream';
import { headOf, type PageHead } from './head.ts';
import { routes } from './routes.tsx';

const handler = createStaticHandler(routes);

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
}

const FALLBACK_HEAD: PageHead = { title: 'Launched Weekly', description: '', indexable: false };

// The only part of the URL that changes what a page shows: the no-JavaScript signup outcome.
const DYNAMIC_QUERY = 'signup';

export async function renderApp(request: Request, options: RenderOptions): Promise<AppRender> {
  const context = await handler.query(request);
  if (context instanceof Response) {
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
  const leafId = context.matches.at(-1)?.route.id ?? 'root';
  const cacheKey = failed || url.searchParams.has(DYNAMIC_QUERY) ? null : leafId === 'not-found' ? 'not-found' : url.pathname;
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
