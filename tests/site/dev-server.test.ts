// `npm run dev`: the same app with Vite in middleware mode. Pages render through Vite's module
// graph (so edits show up without a rebuild) and the HTML carries Vite's hot-reload client.
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.ts';
import { createLogger } from '../../server/http/logger.ts';
import { createDevRenderer } from '../../server/site/load-renderer.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { visibleText } from '../support/html.ts';
import { closeLoopback, listenOnLoopback } from '../support/loopback.ts';

let url = '';
let store: Store;
let closeAll: () => Promise<void>;

beforeAll(async () => {
  store = await openPGliteStore(null);
  const dev = await createDevRenderer();
  const server = createServer();
  url = await listenOnLoopback(server);
  const app = createApp({
    config: { env: 'development', siteUrl: url, trustProxy: 0, rateLimitPerMinute: 100, unsubscribeSecret: 'dev-test-secret-dev-test-secret-dev-test-00' } as Parameters<typeof createApp>[0]['config'],
    store,
    renderer: dev.renderer,
    logger: createLogger({ level: 'silent', pretty: true }),
    assets: { kind: 'middleware', handler: dev.middleware },
  });
  server.on('request', app);
  closeAll = async () => {
    await closeLoopback(server);
    await dev.close();
    await store.close();
  };
}, 120_000);
afterAll(() => closeAll?.());

describe('the development server', () => {
  it('renders a recap through Vite with the hot-reload client', async () => {
    const response = await fetch(`${url}/weekly-recap-july-14`);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const html = await response.text();
    expect(html).toContain('<title>Weekly Recap: July 14, 2025</title>');
    expect(html).toContain('/@vite/client');
    expect(html).toContain('/@react-refresh');
    expect(visibleText(html)).toContain('Data & Automation Tools Lead the Innovation Wave');
  });

  it('serves the client source as modules and answers unknown pages with 404', async () => {
    const entry = await fetch(`${url}/client/entry-client.tsx`);
    expect(entry.status).toBe(200);
    expect(entry.headers.get('content-type')).toMatch(/javascript/);
    expect((await fetch(`${url}/no-such-page`)).status).toBe(404);
  });
});
