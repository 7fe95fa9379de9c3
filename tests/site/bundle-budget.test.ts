// The cost of a first visit, measured on the production build: every script and stylesheet a page
// loads before it is interactive (its <script>/<link> tags and the static imports they pull in).
// Budget: at most 110 KB of gzipped JavaScript and 15 KB of gzipped CSS on any page. The budget
// must hold at ten years of weeks, and since the bundle holds no
// week (cards and text are route data), its size does not depend on the number of weeks:
// tests/release/generated-weeks.test.ts checks that a 300-week build's scripts are within 1 KB of these.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { firstVisitScripts } from '../../scripts/first-visit-scripts.ts';
import { CLIENT_DIST } from '../../server/site/load-renderer.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const JS_BUDGET = 110 * 1024;
const CSS_BUDGET = 15 * 1024;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const read = (url: string) => readFileSync(join(CLIENT_DIST, url.replace(/^\//, '')), 'utf8');
const gzipped = (text: string) => gzipSync(text, { level: 9 }).length;

async function firstVisit(path: string) {
  const html = await (await fetch(server.url + path)).text();
  const styles = [...html.matchAll(/<link[^>]+rel="stylesheet"[^>]+href="([^"]+)"/g)].map((m) => m[1]!);
  const js = new Set(await firstVisitScripts(CLIENT_DIST, html));
  const jsText = [...js].map(read).join('\n');
  return {
    js: [...js],
    jsText,
    jsGzip: [...js].reduce((sum, url) => sum + gzipped(read(url)), 0),
    // The stylesheet is inlined into each page (server/site/load-renderer.ts); linked ones would count too.
    cssGzip:
      styles.reduce((sum, url) => sum + gzipped(read(url)), 0) +
      [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].reduce((sum, m) => sum + gzipped(m[1]!), 0),
  };
}

const PAGES = ['/', '/archive', '/about', ...recaps.map((r) => r.path), '/no-such-page'];

describe('first-visit budget on the production build', () => {
  it('every page loads at most 110 KB of gzipped JS and 15 KB of gzipped CSS', async () => {
    const rows: string[] = [];
    for (const path of PAGES) {
      const visit = await firstVisit(path);
      rows.push(`${path}: JS ${(visit.jsGzip / 1024).toFixed(1)} KB in ${visit.js.length} file(s), CSS ${(visit.cssGzip / 1024).toFixed(1)} KB`);
      expect(visit.jsGzip, path).toBeLessThanOrEqual(JS_BUDGET);
      expect(visit.cssGzip, path).toBeLessThanOrEqual(CSS_BUDGET);
      expect(visit.js.length, path).toBeGreaterThan(0);
      expect(visit.cssGzip, path).toBeGreaterThan(1024);
    }
    console.log(`[budget] ${rows[0]}; ${rows[3]}; (${rows.length} pages checked)`);
  });

  it('ships no week’s text, title or headline in the JavaScript of a first visit, and loads toasts only on use', async () => {
    const visit = await firstVisit('/weekly-recap-july-14');
    for (const recap of recaps) {
      expect(visit.jsText.includes(recap.entries[0]!.note), recap.date).toBe(false);
      expect(visit.jsText.includes(recap.intro), recap.date).toBe(false);
      // Nor the cards: home and archive get them as route data.
      expect(visit.jsText.includes(recap.title), recap.date).toBe(false);
      expect(visit.jsText.includes(recap.headline), recap.date).toBe(false);
    }
    // sonner's toaster markup lives in its own chunk, fetched when the first toast is shown.
    expect(visit.jsText).not.toContain('data-sonner-toaster');
  });
});

describe('what the first paint waits for', () => {
  it('nothing: no stylesheet to fetch, and the app starts from a deferred loader after the first frame', async () => {
    for (const path of ['/', '/archive', '/weekly-recap-july-14']) {
      const html = await (await fetch(server.url + path)).text();
      const scriptTags = [...html.matchAll(/<script\b[^>]*\bsrc="[^"]+"[^>]*>/g)].map((m) => m[0]);
      // One classic deferred script (public/hydrate.js), which adds the entry module itself
      // after the first paint: the HTML names no module for the browser to fetch early.
      expect(scriptTags, path).toEqual([expect.stringMatching(/^<script defer src="\/hydrate\.js" data-entry="\/assets\/index-[\w-]+\.js">$/)]);
      expect(html, path).not.toMatch(/<link[^>]+rel="(?:stylesheet|modulepreload)"/);
      const entry = /data-entry="([^"]+)"/.exec(html)![1]!;
      expect((await fetch(server.url + entry)).status, path).toBe(200);
    }
    const loader = await fetch(server.url + '/hydrate.js');
    expect(loader.status).toBe(200);
    expect(await loader.text()).toContain('requestAnimationFrame');
  });
});
