// /rss.xml, /sitemap.xml and /robots.txt as feed readers and crawlers get them from the real app.
// The feed is read by a real feed-reader library (rss-parser) and checked against the RSS 2.0
// rules the W3C feed validator applies; XML is parsed with a strict (sax) parser, so a document
// that is not well-formed fails the test.
import Parser from 'rss-parser';
import { xml2js, type Element } from 'xml-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatWeekDate } from '../../content/dates.ts';
import { recaps } from '../../content/index.ts';
import { withCampaign } from '../../content/site.ts';
import { sitePaths } from '../../server/app.ts';
import { buildRssFeed, buildSitemap, FEED_ITEM_COUNT } from '../../server/site/feeds.ts';
import { decodeEntities } from '../support/html.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const newest = recaps[0]!;

/** Strict XML parse: throws on anything that is not well-formed. */
function parseXml(xml: string): Element {
  return xml2js(xml, { compact: false, captureSpacesBetweenElements: false }) as Element;
}

const children = (element: Element | undefined, name: string): Element[] =>
  (element?.elements ?? []).filter((child) => child.type === 'element' && child.name === name);
const child = (element: Element | undefined, name: string): Element | undefined => children(element, name)[0];
const text = (element: Element | undefined): string =>
  (element?.elements ?? []).map((node) => (node.type === 'text' ? String(node.text) : node.type === 'cdata' ? String(node.cdata) : '')).join('');

// RFC 822 as RSS 2.0 uses it (four-digit years, as the validator recommends).
const RFC_822 = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} (GMT|[+-]\d{4})$/;
// W3C Datetime, the form the sitemap protocol requires for lastmod.
const W3C_DATE = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/;

async function get(path: string, init?: RequestInit) {
  const response = await fetch(server.url + path, init);
  return { response, body: await response.text() };
}

/** GETs `path` and checks it is served as an hour-cacheable file of `contentType`: what every feed and crawler file shares. */
async function getCacheable(path: string, contentType: string) {
  const fetched = await get(path);
  expect(fetched.response.status).toBe(200);
  expect(fetched.response.headers.get('content-type')).toBe(contentType);
  expect(fetched.response.headers.get('cache-control')).toBe('public, max-age=3600');
  return fetched;
}

describe('the strict XML parser these tests rely on', () => {
  it('rejects documents that are not well-formed', () => {
    expect(() => parseXml('<rss><channel><title>A & B</title></channel></rss>')).toThrow();
    expect(() => parseXml('<rss><channel></rss>')).toThrow();
    expect(parseXml('<rss><channel><title>A &amp; B</title></channel></rss>').elements).toHaveLength(1);
  });
});

describe('GET /rss.xml', () => {
  it('is served as RSS, cacheable for an hour, with a validator for conditional requests', async () => {
    const { response } = await getCacheable('/rss.xml', 'application/rss+xml; charset=utf-8');
    const etag = response.headers.get('etag');
    expect(etag).toBeTruthy();
    // As a feed reader revalidates (fetch would otherwise add Cache-Control: no-cache to a conditional request).
    const again = await fetch(`${server.url}/rss.xml`, { headers: { 'If-None-Match': etag!, 'Cache-Control': 'max-age=0' } });
    expect(again.status).toBe(304);
    const head = await fetch(`${server.url}/rss.xml`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/rss+xml; charset=utf-8');
  });

  it('parses in a feed reader: channel, then one item per recap for the newest 20, newest first, with the full text', async () => {
    const { body } = await get('/rss.xml');
    const feed = await new Parser<Record<string, never>, { 'content:encoded': string }>().parseString(body);
    expect(feed.title).toBe('Launched Weekly');
    expect(feed.link).toBe(`${server.url}/`);
    expect(feed.feedUrl).toBe(`${server.url}/rss.xml`);
    const newest20 = recaps.slice(0, FEED_ITEM_COUNT);
    expect(FEED_ITEM_COUNT).toBe(20);
    expect(feed.items).toHaveLength(newest20.length);
    expect(feed.items.map((item) => item.link)).toEqual(newest20.map((recap) => `${server.url}${recap.path}`));
    feed.items.forEach((item, index) => {
      const recap = recaps[index]!;
      expect(item.title).toBe(`Week of ${formatWeekDate(recap.date)}: ${recap.headline}`);
      expect(item.guid).toBe(`${server.url}${recap.path}`);
      expect(item.isoDate).toBe(`${recap.date}T00:00:00.000Z`);
      const html = item['content:encoded'];
      const readable = decodeEntities(html);
      expect(readable).toContain(recap.intro);
      for (const entry of recap.entries) {
        expect(readable).toContain(`#${entry.rank} `);
        expect(readable).toContain(entry.name);
        expect(readable).toContain(entry.tagline);
        expect(readable).toContain(entry.note);
        expect(readable).toContain(`${entry.upvotes} upvote`);
        // Product links carry the feed's campaign parameters; the HTML escapes their ampersands.
        expect(readable).toContain(`href="${withCampaign(entry.url, { medium: 'rss', week: recap.date })}"`);
      }
      // Every link in the item is absolute: a feed reader has no base address to resolve against.
      const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((match) => decodeEntities(match[1]!));
      expect(hrefs.length).toBeGreaterThanOrEqual(11);
      for (const href of hrefs) expect(href).toMatch(/^https?:\/\//);
    });
  });

  it('passes the RSS 2.0 validator rules', async () => {
    const { body } = await get('/rss.xml');
    const rss = child(parseXml(body), 'rss');
    expect(rss?.attributes?.version).toBe('2.0');
    expect(rss?.attributes?.['xmlns:atom']).toBe('http://www.w3.org/2005/Atom');
    expect(rss?.attributes?.['xmlns:content']).toBe('http://purl.org/rss/1.0/modules/content/');
    const channels = children(rss, 'channel');
    expect(channels).toHaveLength(1);
    const channel = channels[0];

    // Required channel elements, each once and non-empty.
    for (const name of ['title', 'link', 'description']) {
      expect(children(channel, name), name).toHaveLength(1);
      expect(text(child(channel, name)).trim(), name).not.toBe('');
    }
    expect(text(child(channel, 'language'))).toBe('en');
    // The feed's own address, so a reader that was handed a copy knows where to poll.
    const selfLinks = children(channel, 'atom:link').filter((link) => link.attributes?.rel === 'self');
    expect(selfLinks).toHaveLength(1);
    expect(selfLinks[0]!.attributes).toMatchObject({ href: `${server.url}/rss.xml`, type: 'application/rss+xml' });

    const lastBuildDate = text(child(channel, 'lastBuildDate'));
    expect(lastBuildDate).toMatch(RFC_822);
    // The newest recap's date, not the time the process started: restarts do not change the feed.
    expect(new Date(lastBuildDate).toISOString()).toBe(`${newest.date}T00:00:00.000Z`);

    const items = children(channel, 'item');
    expect(items).toHaveLength(Math.min(recaps.length, FEED_ITEM_COUNT));
    const guids = new Set<string>();
    const now = Date.now();
    let previous = Infinity;
    for (const item of items) {
      for (const name of ['title', 'link', 'guid', 'pubDate', 'description']) expect(children(item, name), name).toHaveLength(1);
      const guid = child(item, 'guid')!;
      expect(guid.attributes?.isPermaLink).toBe('true');
      expect(text(guid)).toBe(text(child(item, 'link')));
      guids.add(text(guid));
      const pubDate = text(child(item, 'pubDate'));
      expect(pubDate).toMatch(RFC_822);
      const published = new Date(pubDate).getTime();
      expect(published).toBeLessThanOrEqual(now);
      expect(published).toBeLessThanOrEqual(previous);
      previous = published;
      expect(children(item, 'content:encoded')).toHaveLength(1);
    }
    expect(guids.size).toBe(items.length);
  });

  it('is identical between restarts of the server', async () => {
    const siteUrl = 'https://launchedweekly.example';
    const first = await startTestServer({ store: server.store, config: { siteUrl } });
    const firstBody = await (await fetch(`${first.url}/rss.xml`)).text();
    await first.close();
    const second = await startTestServer({ store: server.store, config: { siteUrl } });
    const secondResponse = await fetch(`${second.url}/rss.xml`);
    const secondBody = await secondResponse.text();
    await second.close();
    expect(secondBody).toBe(firstBody);
    expect(firstBody).toContain(`<atom:link href="${siteUrl}/rss.xml"`);
    expect(await buildRssFeed(recaps, siteUrl)).toBe(firstBody);
  });
});

describe('GET /sitemap.xml', () => {
  it('lists exactly the 27 public pages, each with a W3C lastmod', async () => {
    const { body } = await getCacheable('/sitemap.xml', 'application/xml; charset=utf-8');

    const urlset = child(parseXml(body), 'urlset');
    expect(urlset?.attributes?.xmlns).toBe('http://www.sitemaps.org/schemas/sitemap/0.9');
    const urls = children(urlset, 'url');
    expect(urls).toHaveLength(27);
    const entries = urls.map((url) => ({ loc: text(child(url, 'loc')), lastmod: text(child(url, 'lastmod')) }));
    expect(new Set(entries.map((entry) => entry.loc))).toEqual(new Set([...sitePaths()].map((path) => server.url + path)));
    for (const { loc, lastmod } of entries) {
      expect(lastmod, loc).toMatch(W3C_DATE);
      const recap = recaps.find((candidate) => server.url + candidate.path === loc);
      expect(lastmod, loc).toBe(recap ? recap.date : newest.date);
    }
  });

  it('every listed page answers 200', async () => {
    const { body } = await get('/sitemap.xml');
    const locs = children(child(parseXml(body), 'urlset'), 'url').map((url) => text(child(url, 'loc')));
    const statuses = await Promise.all(locs.map(async (loc) => (await fetch(loc, { method: 'HEAD' })).status));
    expect(statuses).toEqual(locs.map(() => 200));
  });

  it('escapes what XML reserves in addresses', () => {
    const xml = buildSitemap(recaps, 'https://example.com/a&b');
    expect(xml).toContain('<loc>https://example.com/a&amp;b/archive</loc>');
    expect(text(child(children(child(parseXml(xml), 'urlset'), 'url')[1], 'loc'))).toBe('https://example.com/a&b/archive');
  });
});

describe('GET /robots.txt', () => {
  it('allows everything and points at the sitemap', async () => {
    const { body } = await getCacheable('/robots.txt', 'text/plain; charset=utf-8');
    const lines = body.split('\n').map((line) => line.trim());
    expect(lines).toContain('User-agent: *');
    expect(lines).toContain('Allow: /');
    expect(lines.filter((line) => /^disallow:\s*\S/i.test(line))).toEqual([]);
    expect(lines).toContain(`Sitemap: ${server.url}/sitemap.xml`);
  });
});
