// The pictures the site needs that are made from other sources at build time, run at the end of
// `npm run build`: one 1200×630 share card per recap (headline, week, top three with upvotes)
// plus one for every other page, drawn from the content with satori and rasterised with resvg;
// and the favicon set and web-app icons, rasterised from public/favicon.svg. Nothing is fetched:
// the font comes from the installed @fontsource/inter package.
//
// A share card depends only on its week's text and on how cards are drawn, so each PNG is kept in
// a cache (node_modules/.cache/launched-weekly/share-images, outside the repository) under a hash
// of both: a build draws only the cards of weeks that are new or changed. With ten years of weeks
// that is the difference between drawing 520 cards and drawing one.
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Resvg, renderAsync } from '@resvg/resvg-js';
import { createElement, type CSSProperties, type ReactNode } from 'react';
import satori, { type Font } from 'satori';
import { SHARE_IMAGE_SIZE, shareImagePath } from '../shared/head.ts';
import { recaps } from '../content/index.ts';
import type { Recap } from '../content/schema.ts';
import { LAUNCH_PLATFORM, site } from '../content/site.ts';
import { weekLabel } from '../content/text.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const outDir = join(root, 'dist/client');
const cacheDir = join(root, 'node_modules/.cache/launched-weekly/share-images');
/** Cached cards no build has used for this long are deleted (weeks removed, old drawings). */
const CACHE_KEEP_DAYS = 30;
/** Cards rasterised at once on libuv's thread pool (4 threads by default) while the next is laid out. */
const RASTERS_AT_ONCE = 4;
const require = createRequire(import.meta.url);

// The site's colours (client/styles.css).
const colors = {
  brand: '#ff4f8b',
  brandDark: '#c0265c',
  marker: '#15803d',
  ink: '#18181b',
  muted: '#52525b',
  surface: '#fafaf9',
  gradient: 'linear-gradient(90deg, #ff8a3d 0%, #ff4f8b 55%, #7c5cff 100%)',
};

async function loadFonts(): Promise<Font[]> {
  // satori reads WOFF (not WOFF2). latin-ext covers accented names the latin subset lacks.
  const weights = [400, 700, 800] as const;
  const subsets = ['latin', 'latin-ext'] as const;
  const fonts = await Promise.all(
    subsets.flatMap((subset) =>
      weights.map(async (weight): Promise<Font> => ({
        name: 'Inter',
        weight,
        style: 'normal',
        data: await readFile(require.resolve(`@fontsource/inter/files/inter-${subset}-${weight}-normal.woff`)),
      })),
    ),
  );
  return fonts;
}

function el(style: CSSProperties, ...children: ReactNode[]) {
  return createElement('div', { style: { display: 'flex', ...style } }, ...children);
}

function card(logoSrc: string, kicker: string, body: ReactNode) {
  return el(
    { width: '100%', height: '100%', flexDirection: 'column', backgroundColor: colors.surface, fontFamily: 'Inter', color: colors.ink },
    el({ height: 16, width: '100%', backgroundImage: colors.gradient }),
    el(
      { flex: 1, flexDirection: 'column', padding: '48px 72px 56px' },
      el(
        { alignItems: 'center', justifyContent: 'space-between' },
        el(
          { alignItems: 'center', gap: 18 },
          createElement('img', { src: logoSrc, width: 56, height: 56, alt: '' }),
          el({ fontSize: 34, fontWeight: 800 }, site.name),
        ),
        el(
          { alignItems: 'center', gap: 12, fontSize: 26, fontWeight: 700, color: colors.marker },
          el({ width: 14, height: 14, borderRadius: 7, backgroundColor: colors.marker }),
          kicker,
        ),
      ),
      body,
    ),
  );
}

function recapCard(recap: Recap, logoSrc: string) {
  const rows = recap.entries.slice(0, 3).map((entry) =>
    el(
      { alignItems: 'center', gap: 22 },
      el(
        { width: 64, height: 48, alignItems: 'center', justifyContent: 'center', borderRadius: 12, backgroundColor: colors.ink, color: '#ffffff', fontSize: 24, fontWeight: 700 },
        `#${entry.rank}`,
      ),
      el({ fontSize: 36, fontWeight: 700, maxWidth: 700, overflow: 'hidden', whiteSpace: 'nowrap', textOverflow: 'ellipsis' }, entry.name),
      el({ fontSize: 28, fontWeight: 700, color: colors.brandDark }, site.recap.upvotes(entry.upvotes)),
    ),
  );
  return card(
    logoSrc,
    weekLabel(recap.date),
    el(
      { flex: 1, flexDirection: 'column', justifyContent: 'space-between', marginTop: 36 },
      el({ fontSize: 56, fontWeight: 800, lineHeight: 1.12, letterSpacing: -1, lineClamp: 2, maxWidth: 1056 }, recap.headline),
      el(
        { flexDirection: 'column', gap: 18 },
        el({ fontSize: 24, color: colors.muted }, `The week’s top 3 on ${LAUNCH_PLATFORM.name}`),
        ...rows,
      ),
    ),
  );
}

function siteCard(logoSrc: string) {
  return card(
    logoSrc,
    `Top 10 every Monday`,
    el(
      { flex: 1, flexDirection: 'column', justifyContent: 'center', gap: 28 },
      el({ fontSize: 64, fontWeight: 800, lineHeight: 1.1, letterSpacing: -1.5, maxWidth: 1000 }, site.hero.line),
      el({ fontSize: 30, color: colors.muted }, `The Top 10 from ${LAUNCH_PLATFORM.name}, with an editor’s note on each.`),
    ),
  );
}

/** Lays the card out as SVG (satori, on this thread). */
function layOut(element: ReactNode, fonts: Font[]): Promise<string> {
  return satori(element, { ...SHARE_IMAGE_SIZE, fonts });
}

/** Rasterises a card's SVG on libuv's thread pool, so this thread can lay out the next card meanwhile. */
async function rasteriseCard(svg: string): Promise<Buffer> {
  return (await renderAsync(svg, { fitTo: { mode: 'width', value: SHARE_IMAGE_SIZE.width } })).asPng();
}

function rasterise(svg: string, size: number): Buffer {
  return new Resvg(svg, { fitTo: { mode: 'width', value: size } }).render().asPng();
}

/** A .ico holding PNG images (allowed since Windows Vista; every current browser reads it). */
function ico(pngs: readonly { size: number; data: Buffer }[]): Buffer {
  const header = Buffer.alloc(6 + 16 * pngs.length);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2);
  header.writeUInt16LE(pngs.length, 4);
  let offset = header.length;
  pngs.forEach(({ size, data }, index) => {
    const entry = 6 + 16 * index;
    header.writeUInt8(size >= 256 ? 0 : size, entry);
    header.writeUInt8(size >= 256 ? 0 : size, entry + 1);
    header.writeUInt16LE(1, entry + 4);
    header.writeUInt16LE(32, entry + 6);
    header.writeUInt32LE(data.length, entry + 8);
    header.writeUInt32LE(offset, entry + 12);
    offset += data.length;
  });
  return Buffer.concat([header, ...pngs.map((png) => png.data)]);
}

async function writeIcons(faviconSvg: string): Promise<string[]> {
  // Home screens and Android's maskable icons cut their own shape: they get the square without
  // the rounded corners. The rocket already sits inside the maskable safe zone (the central
  // circle of 80% diameter), so it needs no shrinking.
  const fullBleed = faviconSvg.replace(/ rx="[\d.]+"/, '');
  if (fullBleed === faviconSvg) throw new Error('public/favicon.svg no longer has the rounded <rect rx="…"> this script squares off');
  const files: Record<string, Buffer> = {
    'favicon.ico': ico([16, 32, 48].map((size) => ({ size, data: rasterise(faviconSvg, size) }))),
    'apple-touch-icon.png': rasterise(fullBleed, 180),
    'icon-192.png': rasterise(faviconSvg, 192),
    'icon-512.png': rasterise(faviconSvg, 512),
    'icon-maskable-512.png': rasterise(fullBleed, 512),
  };
  await Promise.all(Object.entries(files).map(([name, data]) => writeFile(join(outDir, name), data)));
  return Object.keys(files);
}

/**
 * Everything besides a card's own data that decides its pixels: this script, the site's texts,
 * the logo, and the versions of the fonts and renderers.
 */
async function drawingVersion(faviconSvg: string): Promise<string> {
  const hash = createHash('sha256');
  for (const file of ['scripts/share-images.ts', 'content/site.ts', 'content/dates.ts', 'shared/head.ts']) hash.update(await readFile(join(root, file)));
  hash.update(faviconSvg);
  for (const name of ['satori', '@resvg/resvg-js', '@fontsource/inter']) {
    const manifest = JSON.parse(await readFile(require.resolve(`${name}/package.json`), 'utf8')) as { version: string };
    hash.update(`${name}@${manifest.version}`);
  }
  return hash.digest('hex');
}

/** The week's fields a recap card shows. */
const cardData = (recap: Recap) => ({ date: recap.date, headline: recap.headline, top: recap.entries.slice(0, 3).map(({ rank, name, upvotes }) => ({ rank, name, upvotes })) });

async function pruneCache(): Promise<number> {
  const cutoff = Date.now() - CACHE_KEEP_DAYS * 24 * 60 * 60 * 1000;
  let removed = 0;
  for (const name of await readdir(cacheDir)) {
    const file = join(cacheDir, name);
    if ((await stat(file)).mtimeMs < cutoff) {
      await rm(file, { force: true });
      removed++;
    }
  }
  return removed;
}

async function main() {
  const started = performance.now();
  const faviconSvg = await readFile(join(root, 'public/favicon.svg'), 'utf8');
  const logoSrc = `data:image/svg+xml;base64,${Buffer.from(faviconSvg).toString('base64')}`;
  await mkdir(join(outDir, 'share'), { recursive: true });
  await mkdir(cacheDir, { recursive: true });
  const version = await drawingVersion(faviconSvg);

  const cards: { path: string; data: unknown; element: () => ReactNode }[] = [
    { path: shareImagePath(), data: 'site', element: () => siteCard(logoSrc) },
    ...recaps.map((recap) => ({ path: shareImagePath(recap.date), data: cardData(recap), element: () => recapCard(recap, logoSrc) })),
  ];
  let fonts: Font[] | undefined;
  let drawn = 0;
  // A first build on an empty cache (a fresh machine, an image built without its cache mount)
  // draws every card: at 520 weeks that is minutes of work done one card after another. Laying
  // out (satori) takes about 40% of a card and rasterising (resvg) the rest, so the two overlap:
  // up to RASTERS_AT_ONCE cards are being rasterised while the next is laid out. A failed card
  // stays in the set, so the next wait rethrows its error and the build fails.
  const rastering = new Set<Promise<void>>();
  for (const { path, data, element } of cards) {
    const cached = join(cacheDir, `${createHash('sha256').update(version).update(JSON.stringify(data)).digest('hex').slice(0, 40)}.png`);
    const target = join(outDir, path);
    const hit = await stat(cached).then(() => true, () => false);
    if (hit) {
      // Touched on use, so pruning keeps what builds still need.
      const now = new Date();
      await utimes(cached, now, now);
      await copyFile(cached, target);
      continue;
    }
    fonts ??= await loadFonts();
    const svg = await layOut(element(), fonts);
    const job = rasteriseCard(svg).then(async (png) => {
      await writeFile(cached, png);
      await copyFile(cached, target);
    });
    rastering.add(job);
    job.then(() => rastering.delete(job), () => {});
    drawn++;
    if (rastering.size >= RASTERS_AT_ONCE) await Promise.race(rastering);
  }
  await Promise.all(rastering);
  const pruned = await pruneCache();
  const icons = await writeIcons(faviconSvg);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    `share-images: ${cards.length} share cards (${drawn} drawn, ${cards.length - drawn} from the cache${pruned ? `, ${pruned} stale removed` : ''}) and ${icons.length} icons in dist/client, ${seconds} s`,
  );
}

await main();
