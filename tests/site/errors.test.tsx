// What a reader sees when rendering fails: the seed's router screen with the error's text in
// development, a plain apology in production, never a stack trace.
import { renderToString } from 'react-dom/server';
import { createStaticHandler, createStaticRouter, StaticRouterProvider } from 'react-router-dom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorPage } from '../../client/pages/ErrorPage.tsx';
import { createApp } from '../../server/app.ts';
import { createLogger } from '../../server/http/logger.ts';
import { CLIENT_DIST, loadBuiltRenderer } from '../../server/site/load-renderer.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { createServer } from 'node:http';
import { closeLoopback, listenOnLoopback } from '../support/loopback.ts';

describe('the route error screen in development', () => {
  it("shows 'Unexpected Application Error!' followed by the error text", async () => {
    const routes = [
      {
        path: '/',
        loader: () => {
          throw new Error('The recap file could not be read');
        },
        Component: () => null,
        ErrorBoundary: ErrorPage,
      },
    ];
    const handler = createStaticHandler(routes);
    const context = await handler.query(new Request('http://localhost/'));
    if (context instanceof Response) throw new Error('unexpected response');
    const html = renderToString(<StaticRouterProvider router={createStaticRouter(handler.dataRoutes, context)} context={context} hydrate={false} />);
    expect(import.meta.env.DEV).toBe(true);
    expect(html).toContain('<h2>Unexpected Application Error!</h2>');
    expect(html).toContain('The recap file could not be read');
  });
});

describe('a failing render in production', () => {
  let url = '';
  let store: Store;
  let close: () => Promise<void>;
  const logged: string[] = [];

  beforeAll(async () => {
    store = await openPGliteStore(null);
    const built = await loadBuiltRenderer();
    const server = createServer();
    url = await listenOnLoopback(server);
    const destination = { write: (line: string) => logged.push(line) } as unknown as NodeJS.WritableStream;
    server.on(
      'request',
      createApp({
        config: { env: 'production', siteUrl: url, trustProxy: 0, rateLimitPerMinute: 100, unsubscribeSecret: 'errors-test-secret-errors-test-secret-000' } as Parameters<typeof createApp>[0]['config'],
        store,
        renderer: {
          ...built,
          renderApp: async () => {
            throw new Error('Internal detail at /work/main/client/secret-path.tsx:12');
          },
        },
        logger: createLogger({ level: 'error', pretty: false, destination }),
        assets: { kind: 'static', dir: CLIENT_DIST },
      }),
    );
    close = async () => {
      await closeLoopback(server);
      await store.close();
    };
  });
  afterAll(() => close?.());

  it('answers 500 with an apology and no internal detail, and logs the error', async () => {
    const response = await fetch(`${url}/weekly-recap-july-14`);
    expect(response.status).toBe(500);
    const html = await response.text();
    expect(html).toContain('Sorry, something went wrong on our side.');
    expect(html).not.toMatch(/secret-path|\/work\/main|Internal detail|at .*\.tsx?:\d+/);
    expect(logged.join('\n')).toContain('Internal detail');
  });

  it('keeps the API and health checks working', async () => {
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const response = await fetch(`${url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":"still@example.com"}' });
    expect(response.status).toBe(201);
  });
});
