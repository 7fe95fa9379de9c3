// Every page as a crawler or a reader without JavaScript gets it: status, full text in the HTML,
// head tags, and the HTTP caching the production server promises.
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatWeekDate } from '../../content/dates.ts';
import { recaps } from '../../content/index.ts';
import { site } from '../../content/site.ts';
import { visibleText } from '../support/html.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${server.url}${path}`, { headers, redirect: 'manual' });

async function page(path: string) {
  const response = await get(path);
  const html = await response.text();
  return { response, html, text: visibleText(html) };
}

describe('home', () => {
  it('has every text of the spec in its HTML', async () => {
    const { response, text, html } = await page('/');
    expect(response.status).toBe(200);
    for (const expected of [
      'Launched on',
      "Lovable's most upvoted products, recapped weekly by... another thing built with Lovable.",
      'Yes, this site is very on brand.',
      'Every Monday, get a curated Top 10 from Launched by Lovable (opens in a new tab) — with commentary, trends, and standout picks.',
      'Latest Top 10s',
      'View All Weekly Recaps',
      'Follow along for updates',
      'Follow on X',
      'Follow on LinkedIn',
      'Built in Lisbon with Lovable',
      'Enter your email',
      'Free forever. Unsubscribe anytime.',
    ]) {
      expect(text.includes(expected) || html.includes(`placeholder="${expected}"`), expected).toBe(true);
    }
    expect(html).toMatch(/<img src="[^"]+" alt="Launched by Lovable" width="200" height="48"/);
    const cards = text.match(/Week of [A-Z][a-z]+ \d+, 2025/g);
    expect(cards).toEqual(['Week of July 14, 2025', 'Week of July 6, 2025', 'Week of June 30, 2025']);
    expect(text.match(/Read Recap/g)).toHaveLength(3);
  });
});

describe('archive', () => {
  it('lists all 24 recaps newest first', async () => {
    const { text } = await page('/archive');
    expect(text).toContain('Weekly Recap Archive');
    expect(text).toContain('Browse all our weekly top 10 roundups');
    const weeks = text.match(/Week of [A-Z][a-z]+ \d+, 2025/g)!;
    expect(weeks).toHaveLength(24);
    expect(weeks[0]).toBe('Week of July 14, 2025');
    expect(weeks[23]).toBe('Week of February 2, 2025');
  });
});

describe('about', () => {
  it('explains the site, links X, LinkedIn and a feedback address, and has a signup card', async () => {
    const { html, text } = await page('/about');
    expect(text).toContain('built and curated by one person');
    expect(html).toContain(`href="${site.social.x}"`);
    expect(html).toContain(`href="${site.social.linkedin}"`);
    expect(html).toContain(`href="mailto:${site.contactEmail}?subject=Feedback%20on%20Launched%20Weekly"`);
    expect(html).toContain('id="email-signup"');
  });
});

describe('the 24 recap pages', () => {
  it.each(recaps.map((recap) => [recap.path, recap] as const))('%s has its full text, title and links', async (path, recap) => {
    const { response, html, text } = await page(path);
    expect(response.status).toBe(200);
    expect(html).toContain(`<title>Weekly Recap: ${formatWeekDate(recap.date)}</title>`);
    expect(html).toContain(`<link rel="canonical" href="${server.url}${path}" />`);
    expect(text).toContain(`Week of ${formatWeekDate(recap.date)}`);
    expect(text).toContain(recap.headline);
    expect(text).toContain('Your weekly Top 10 from Launched by Lovable');
    expect(text).toContain(recap.intro);
    expect(text.match(/Editor's Note/g)).toHaveLength(10);
    for (const entry of recap.entries) {
      expect(text).toContain(`#${entry.rank}`);
      expect(text).toContain(entry.note);
      expect(text).toContain(`${entry.upvotes} upvotes`);
      const link = html.match(new RegExp(`<a href="([^"]+)" target="_blank" rel="noopener noreferrer"[^>]*>${entry.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}<`));
      expect(link, entry.name).not.toBeNull();
      const href = new URL(link![1]!.replaceAll('&amp;', '&'));
      expect(`${href.origin}${href.pathname}`).toBe(entry.url);
      expect(Object.fromEntries(href.searchParams)).toEqual({ utm_source: 'launched-weekly', utm_medium: 'recap', utm_campaign: `weekly-recap-${recap.date}` });
    }
    expect(html).toContain('id="email-signup"');
    if (recap.layout.ending === 'call-to-action') {
      expect(text).toContain('Get the best of Launched — weekly.');
      expect(text).toContain('Subscribe now →');
    }
    if (recap.layout.upvotes === 'after-tagline') expect(text).toContain(`${recap.entries[0]!.tagline} — ${recap.entries[0]!.upvotes} upvotes`);
    if (recap.layout.backLink) expect(text).toContain('← Back to home');
    if (recap.layout.supportBanner) expect(text).toContain(site.recap.supportBanner);
  });

  it('link each week to the one before and after it', async () => {
    const { html } = await page('/weekly-recap-june-9');
    expect(html).toMatch(/href="\/weekly-recap-june-1"[^>]*>← Week of <!-- -->Jun 1/);
    expect(html).toMatch(/href="\/weekly-recap-june-16"[^>]*>Week of <!-- -->Jun 16<!-- --> →/);
  });
});

describe('unknown addresses and methods', () => {
  it('answer a real 404 page with links home and to the archive', async () => {
    const { response, html, text } = await page('/weekly-recap-august-1');
    expect(response.status).toBe(404);
    expect(text).toContain('Page not found');
    expect(html).toContain('href="/archive"');
    expect(html).toContain('<meta name="robots" content="noindex" />');
    expect((await get('/../../etc/passwd')).status).toBe(404);
  });

  it('redirect a trailing slash to the canonical address', async () => {
    const response = await get('/archive/?ref=x');
    expect(response.status).toBe(301);
    expect(response.headers.get('location')).toBe('/archive?ref=x');
  });

  it('do not serve the raw template, and answer a malformed address with an HTML 400', async () => {
    const template = await get('/index.html');
    expect(template.status).toBe(301);
    expect(template.headers.get('location')).toBe('/');
    const malformed = await get('/weekly-recap-%E0%A4%A');
    expect(malformed.status).toBe(400);
    expect(malformed.headers.get('content-type')).toMatch(/text\/html/);
    expect(await malformed.text()).toContain('This address could not be understood');
  });

  it('answer an address over 16 KB with 431 and a sentence', async () => {
    const response = await get(`/archive?q=${'x'.repeat(20_000)}`);
    expect(response.status).toBe(431);
    expect(await response.text()).toBe('The request address or headers are too long.');
  });

  it('answer GET /api/subscribe with 405 and how to sign up', async () => {
    const response = await get('/api/subscribe');
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(((await response.json()) as { message: string }).message).toMatch(/POST request/);
  });

  it('refuse other methods on pages with 405', async () => {
    const response = await fetch(`${server.url}/archive`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('HTTP caching and compression', () => {
  it('serves HTML as no-cache with an ETag, and 304 when unchanged', async () => {
    const first = await get('/weekly-recap-july-14');
    const etag = first.headers.get('etag');
    expect(first.headers.get('cache-control')).toBe('no-cache');
    expect(etag).toMatch(/^"[\w-]{20,}"$/);
    const again = await get('/weekly-recap-july-14', { 'if-none-match': etag! });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('compresses pages', async () => {
    // node:http, not fetch: fetch decompresses on its own and hides the encoding.
    const { headers, body } = await new Promise<{ headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      httpGet(`${server.url}/archive`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });
    expect(headers['content-encoding']).toBe('gzip');
    const html = gunzipSync(body).toString();
    expect(html).toContain('Weekly Recap Archive');
    expect(body.length).toBeLessThan(html.length / 3);
  });

  it('serves hashed assets as immutable for a year', async () => {
    const { html } = await page('/');
    const script = html.match(/data-entry="(\/assets\/index-[\w-]+\.js)"/)![1]!;
    const response = await get(script);
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await get('/assets/missing-file.js')).status).toBe(404);
  });

  it('answers the health checks', async () => {
    expect(await (await get('/healthz')).json()).toEqual({ status: 'ok' });
    expect(await (await get('/readyz')).json()).toEqual({ status: 'ready', store: 'pglite' });
  });
});
