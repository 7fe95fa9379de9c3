// Soft 404s: a page answers 200 only under its own path. Other spellings of a known
// page are sent there with a 301, and asking for them first must not change what unknown paths
// get afterwards (the rendered-page cache is keyed by the page rendered, not the path asked for).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const get = (path: string) => fetch(`${server.url}${path}`, { redirect: 'manual' });
const canonicalOf = (html: string) => /<link rel="canonical" href="([^"]+)"/.exec(html)?.[1];
const titleOf = (html: string) => /<title>([^<]*)<\/title>/.exec(html)?.[1];

const SPELLINGS: [string, string][] = [
  ['/ABOUT', '/about'],
  ['/%61bout', '/about'],
  ['/About?ref=x', '/about?ref=x'],
  ['//about', '/about'],
  ['/ARCHIVE', '/archive'],
  ['/Weekly-Recap-July-14', '/weekly-recap-july-14'],
  ['/weekly%2Drecap%2Djune%2D9', '/weekly-recap-june-9'],
];

describe('one address per page', () => {
  it('sends other spellings of a known page to its path, then still answers 404 for unknown paths', async () => {
    // Non-canonical spellings first, on a server whose page cache is empty.
    for (const [spelling, canonical] of SPELLINGS) {
      const response = await get(spelling);
      expect(response.status, spelling).toBe(301);
      expect(response.headers.get('location'), spelling).toBe(canonical);
    }
    const trailing = await get('/about/');
    expect(trailing.status).toBe(301);
    expect(trailing.headers.get('location')).toBe('/about');

    for (const unknown of ['/nope', '/aboutx', '/weekly-recap-july-15', '/archive/2025', '/ABOUT/extra']) {
      const response = await get(unknown);
      const html = await response.text();
      expect(response.status, unknown).toBe(404);
      expect(titleOf(html), unknown).toBe('Page not found | Launched Weekly');
      expect(canonicalOf(html), unknown).toBeUndefined();
    }
  });

  it('serves every known page under its own path, with that path as its canonical link', async () => {
    for (const path of ['/', '/archive', '/about', ...recaps.map((recap) => recap.path)]) {
      const response = await get(path);
      expect(response.status, path).toBe(200);
      expect(canonicalOf(await response.text()), path).toBe(server.url + path);
    }
    // And after all of them, an unknown path is still the 404 page.
    const after = await get('/nope');
    expect(after.status).toBe(404);
    expect(titleOf(await after.text())).toBe('Page not found | Launched Weekly');
  });
});
