// What search engines and link previews read from every page of the real app: Open Graph and X
// card tags, the canonical address, schema.org JSON-LD; the share cards and icons the build makes;
// and, in Chromium, that the JSON-LD blocks raise no Content-Security-Policy violation.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARE_IMAGE_SIZE } from '../../shared/head.ts';
import { recaps } from '../../content/index.ts';
import { sitePaths } from '../../server/app.ts';
import { jsonLdScript, renderHead } from '../../server/site/html.ts';
import { CLIENT_DIST } from '../../server/site/load-renderer.ts';
import { chromiumAvailable, launchChromium } from '../support/browser.ts';
import { decodeEntities } from '../support/html.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

interface Head {
  meta: Map<string, string>;
  links: { rel: string; href: string; type?: string; sizes?: string }[];
  jsonLd: Record<string, unknown>[];
}

function attributes(tag: string): Record<string, string> {
  return Object.fromEntries([...tag.matchAll(/([\w:-]+)="([^"]*)"/g)].map((match) => [match[1]!, decodeEntities(match[2]!)]));
}

/** The document head as a crawler reads it: meta by property or name, links, and parsed JSON-LD. */
function readHead(html: string): Head {
  const head = html.slice(0, html.indexOf('</head>'));
  const meta = new Map<string, string>();
  for (const [tag] of head.matchAll(/<meta\s[^>]*>/g)) {
    const attrs = attributes(tag);
    const key = attrs.property ?? attrs.name;
    if (key && attrs.content !== undefined) {
      expect(meta.has(key), `${key} appears once`).toBe(false);
      meta.set(key, attrs.content);
    }
  }
  const links = [...head.matchAll(/<link\s[^>]*>/g)].map(([tag]) => attributes(tag) as Head['links'][number]);
  const jsonLd = [...head.matchAll(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/g)].map((match) => JSON.parse(match[1]!) as Record<string, unknown>);
  return { meta, links, jsonLd };
}

function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  expect(png.toString('latin1', 12, 16)).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

const EXPECTED_TYPES: Record<string, string[]> = { '/': ['WebSite', 'Organization'], '/archive': ['CollectionPage'], '/about': ['AboutPage'] };

describe('every public page', () => {
  const paths = [...sitePaths()];

  it('covers all 27 pages', () => {
    expect(paths).toHaveLength(27);
  });

  it('has a canonical address, Open Graph and X card tags, and JSON-LD of the right type', async () => {
    const pages = await Promise.all(paths.map(async (path) => ({ path, html: await (await fetch(server.url + path)).text() })));
    const images = new Set<string>();
    for (const { path, html } of pages) {
      const { meta, links, jsonLd } = readHead(html);
      const canonical = links.find((link) => link.rel === 'canonical')?.href;
      expect(canonical, path).toBe(server.url + path);
      const recap = recaps.find((candidate) => candidate.path === path);

      const title = decodeEntities(/<title>([^<]+)<\/title>/.exec(html)![1]!);
      expect(meta.get('og:title'), path).toBe(title);
      expect(meta.get('og:description'), path).toBe(meta.get('description'));
      expect(meta.get('og:description')!.length, path).toBeGreaterThan(40);
      expect(meta.get('og:url'), path).toBe(canonical);
      expect(meta.get('og:site_name'), path).toBe('Launched Weekly');
      expect(meta.get('og:type'), path).toBe(recap ? 'article' : 'website');
      const image = meta.get('og:image')!;
      expect(image, path).toBe(`${server.url}/share/${recap ? recap.date : 'site'}.png`);
      expect(meta.get('og:image:width'), path).toBe(String(SHARE_IMAGE_SIZE.width));
      expect(meta.get('og:image:height'), path).toBe(String(SHARE_IMAGE_SIZE.height));
      expect(meta.get('og:image:alt')!.length, path).toBeGreaterThan(20);
      images.add(image);

      expect(meta.get('twitter:card'), path).toBe('summary_large_image');
      expect(meta.get('twitter:title'), path).toBe(meta.get('og:title'));
      expect(meta.get('twitter:description'), path).toBe(meta.get('og:description'));
      expect(meta.get('twitter:image'), path).toBe(image);

      expect(jsonLd.map((data) => data['@type']), path).toEqual(recap ? ['Article', 'ItemList'] : EXPECTED_TYPES[path]);
      for (const data of jsonLd) expect(data['@context'], path).toBe('https://schema.org');

      if (recap) {
        expect(meta.get('og:image:alt'), path).toContain(recap.headline);
        for (const entry of recap.entries.slice(0, 3)) expect(meta.get('og:image:alt'), path).toContain(entry.name);
        expect(meta.get('article:published_time'), path).toBe(recap.date);
        const [article, list] = jsonLd as [Record<string, unknown>, Record<string, unknown>];
        expect(article).toMatchObject({
          headline: recap.headline,
          datePublished: recap.date,
          url: canonical,
          image: { url: image, width: 1200, height: 630 },
          author: { '@type': 'Organization', name: 'Launched Weekly' },
          publisher: { '@type': 'Organization', name: 'Launched Weekly', logo: { url: `${server.url}/icon-512.png` } },
        });
        expect(list.numberOfItems).toBe(10);
        expect(list.itemListElement).toEqual(recap.entries.map((entry) => ({ '@type': 'ListItem', position: entry.rank, name: entry.name, url: entry.url })));
      }
    }

    // Every image a preview would show is really there.
    expect(images.size).toBe(recaps.length + 1);
    for (const image of images) {
      const response = await fetch(image);
      expect(response.status, image).toBe(200);
      expect(response.headers.get('content-type'), image).toBe('image/png');
      expect(pngSize(Buffer.from(await response.arrayBuffer())), image).toEqual(SHARE_IMAGE_SIZE);
    }
  });

  it('the home page describes the site as a WebSite published by an Organization', async () => {
    const { jsonLd } = readHead(await (await fetch(`${server.url}/`)).text());
    const [website, organization] = jsonLd;
    expect(website).toMatchObject({ '@type': 'WebSite', name: 'Launched Weekly', url: `${server.url}/`, publisher: { '@type': 'Organization' } });
    expect(organization).toMatchObject({
      '@type': 'Organization',
      name: 'Launched Weekly',
      url: `${server.url}/`,
      sameAs: ['https://x.com/launchedweekly', 'https://www.linkedin.com/company/launched-weekly'],
    });
  });

  it('a page that does not exist is kept out of search and previews', async () => {
    const response = await fetch(`${server.url}/no-such-page`);
    expect(response.status).toBe(404);
    const { meta, links, jsonLd } = readHead(await response.text());
    expect(meta.get('robots')).toBe('noindex');
    expect(links.some((link) => link.rel === 'canonical')).toBe(false);
    expect(meta.has('og:url')).toBe(false);
    expect(jsonLd).toEqual([]);
  });
});

describe('JSON-LD escaping', () => {
  it('no text in the data can close the script element, and the data survives intact', () => {
    const data = { '@type': 'Article', headline: 'A </script><script>alert(1)</script> & <!-- b -->' };
    const tag = jsonLdScript(data);
    expect(tag.match(/<\/script/gi)).toHaveLength(1);
    expect(tag).not.toContain('<!--');
    const inner = tag.slice('<script type="application/ld+json">'.length, -'</script>'.length);
    expect(JSON.parse(inner)).toEqual(data);
  });

  it('applies to what a route puts in the head', () => {
    const html = renderHead(
      { title: 't', description: 'd', indexable: true, jsonLd: () => [{ '@type': 'Thing', name: '</script><img src=x onerror=alert(1)>' }] },
      { siteUrl: 'https://example.com', pathname: '/x' },
    );
    expect(html).not.toContain('<img');
    expect(readHead(`${html}</head>`).jsonLd).toEqual([{ '@type': 'Thing', name: '</script><img src=x onerror=alert(1)>' }]);
  });
});

describe('share cards made by the build', () => {
  it('one 1200×630 PNG under 150 KB per recap and one for the other pages', async () => {
    const files = ['site', ...recaps.map((recap) => recap.date)].map((name) => join(CLIENT_DIST, 'share', `${name}.png`));
    expect(files).toHaveLength(25);
    for (const file of files) {
      const png = await readFile(file);
      expect(pngSize(png), file).toEqual({ width: 1200, height: 630 });
      expect(png.length, file).toBeLessThan(150 * 1024);
    }
  });
});

describe('icons and web app manifest', () => {
  it('every page links the favicon set and the manifest', async () => {
    const { links } = readHead(await (await fetch(`${server.url}/about`)).text());
    expect(links).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ rel: 'icon', href: '/favicon.ico' }),
        expect.objectContaining({ rel: 'icon', href: '/favicon.svg', type: 'image/svg+xml' }),
        expect.objectContaining({ rel: 'apple-touch-icon', href: '/apple-touch-icon.png' }),
        expect.objectContaining({ rel: 'manifest', href: '/site.webmanifest' }),
      ]),
    );
  });

  it('the manifest names the site and every icon it lists is served at its stated size', async () => {
    const response = await fetch(`${server.url}/site.webmanifest`);
    expect(response.status).toBe(200);
    const manifest = (await response.json()) as {
      name: string;
      short_name: string;
      start_url: string;
      display: string;
      theme_color: string;
      background_color: string;
      icons: { src: string; sizes: string; type: string; purpose?: string }[];
    };
    expect(manifest).toMatchObject({ name: 'Launched Weekly', start_url: '/', display: 'browser' });
    expect(manifest.short_name.length).toBeLessThanOrEqual(12);
    expect(manifest.theme_color).toMatch(/^#[0-9a-f]{6}$/i);
    expect(manifest.background_color).toMatch(/^#[0-9a-f]{6}$/i);
    const pngs = manifest.icons.filter((icon) => icon.type === 'image/png');
    expect(pngs.map((icon) => icon.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']));
    expect(manifest.icons.some((icon) => icon.purpose === 'maskable')).toBe(true);
    for (const icon of manifest.icons) {
      const served = await fetch(server.url + icon.src);
      expect(served.status, icon.src).toBe(200);
      expect(served.headers.get('content-type'), icon.src).toContain(icon.type);
      if (icon.type === 'image/png') {
        const [width, height] = icon.sizes.split('x').map(Number);
        expect(pngSize(Buffer.from(await served.arrayBuffer())), icon.src).toEqual({ width, height });
      }
    }
  });

  it('favicon.ico holds 16, 32 and 48 pixel PNGs; the apple-touch icon is 180 pixels', async () => {
    const ico = Buffer.from(await (await fetch(`${server.url}/favicon.ico`)).arrayBuffer());
    expect([ico.readUInt16LE(0), ico.readUInt16LE(2)]).toEqual([0, 1]);
    const count = ico.readUInt16LE(4);
    const sizes = Array.from({ length: count }, (_, index) => {
      const entry = 6 + 16 * index;
      const png = ico.subarray(ico.readUInt32LE(entry + 12), ico.readUInt32LE(entry + 12) + ico.readUInt32LE(entry + 8));
      const { width, height } = pngSize(png);
      expect(ico.readUInt8(entry)).toBe(width);
      return `${width}x${height}`;
    });
    expect(sizes).toEqual(['16x16', '32x32', '48x48']);
    const touch = Buffer.from(await (await fetch(`${server.url}/apple-touch-icon.png`)).arrayBuffer());
    expect(pngSize(touch)).toEqual({ width: 180, height: 180 });
    expect((await stat(join(CLIENT_DIST, 'apple-touch-icon.png'))).size).toBe(touch.length);
  });
});

describe.skipIf(!chromiumAvailable)('in Chromium', () => {
  it('JSON-LD and head tags raise no CSP violation or console error, and survive hydration', async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      await page.addInitScript(() => {
        document.addEventListener('securitypolicyviolation', (event) => {
          console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`);
        });
      });
      for (const path of ['/', '/archive', '/about', recaps[0]!.path]) {
        await page.goto(server.url + path, { waitUntil: 'networkidle' });
        await page.waitForSelector('#email-signup form[novalidate]');
        const blocks = await page.$$eval('script[type="application/ld+json"]', (scripts) => scripts.map((script) => JSON.parse(script.textContent ?? '') as { '@type': string }));
        expect(blocks.length, path).toBeGreaterThan(0);
        const ogImage = await page.getAttribute('meta[property="og:image"]', 'content');
        expect(ogImage, path).toMatch(/\/share\/[\w-]+\.png$/);
      }
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
