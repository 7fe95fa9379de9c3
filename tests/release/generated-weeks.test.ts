// Ten years of Mondays, scaled down for CI: a temporary copy of the repository with a
// few hundred synthetic weeks after the 24 real ones, built with Vite and served by the real
// server. The bundle must hold no week's title or headline (its size must not grow with the
// weeks), and every week from 2026 on must live at an address that carries its year, in every
// place that links to it. The full 520-week figures are `npm run bench -- scale`.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { CLIENT_DIST } from '../../server/site/load-renderer.ts';
import { FIRST_SYNTHETIC_WEEK, makeScaledCopy, viteBuild, type ScaledCopy } from '../../bench/support/scale-copy.ts';
import { freePort } from '../../scripts/free-port.ts';
import { startServerProcess, type ServerProcess } from '../support/server-process.ts';

const TOTAL_WEEKS = 300;
const SITE_URL = 'https://weekly.example';

let copy: ScaledCopy;
const coming = () => copy.synthetic.at(-1)!;
let server: ServerProcess | undefined;
let dataDir: string;
let base: string;

beforeAll(async () => {
  // The newest synthetic week is years ahead and not public yet; the others say they were published.
  copy = await makeScaledCopy(TOTAL_WEEKS, { comingWeeks: 1 });
  await viteBuild(copy);
  dataDir = await mkdtemp(join(tmpdir(), 'generated-weeks-data-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // Its own environment, not this process's: the copy must not see a DATABASE_URL or a key from here.
  server = await startServerProcess(
    { NODE_ENV: 'development', PORT: String(port), DATA_DIR: dataDir, SITE_URL, DIGEST_CRON: 'off', LOG_LEVEL: 'info' },
    180_000,
    copy.root,
  );
}, 240_000);

afterAll(async () => {
  await server?.stop('SIGTERM');
  await copy?.remove();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** Every script of the build, and their gzipped sizes summed (the entry loads its chunks itself). */
async function bundleText(dist: string): Promise<{ all: string; scriptsGzip: number }> {
  const assets = join(dist, 'assets');
  const files = (await readdir(assets)).filter((file) => file.endsWith('.js'));
  const texts = await Promise.all(files.map((file) => readFile(join(assets, file), 'utf8')));
  return { all: texts.join('\n'), scriptsGzip: texts.reduce((sum, text) => sum + gzipSync(text, { level: 9 }).length, 0) };
}

describe(`a copy with ${TOTAL_WEEKS} weeks`, () => {
  it('ships no week’s title or headline in any script, and scripts the size of the 24-week ones', async () => {
    const generated = await bundleText(join(copy.root, 'dist/client'));
    const weeks = [...copy.synthetic, ...recaps];
    expect(weeks).toHaveLength(TOTAL_WEEKS);
    for (const week of weeks) {
      expect(generated.all.includes(week.title), week.date).toBe(false);
      expect(generated.all.includes(week.headline), week.date).toBe(false);
    }
    const own = await bundleText(CLIENT_DIST);
    console.log(`[generated-weeks] scripts ${(generated.scriptsGzip / 1024).toFixed(1)} KB gzipped at ${TOTAL_WEEKS} weeks, ${(own.scriptsGzip / 1024).toFixed(1)} KB at 24`);
    expect(Math.abs(generated.scriptsGzip - own.scriptsGzip)).toBeLessThanOrEqual(1024);
  });

  it('gives every week from 2026 on an address with its year, and 2025’s weeks the seed’s', () => {
    for (const week of copy.synthetic) {
      const [year] = week.date.split('-');
      expect(week.path.endsWith(`-${year}`), week.date).toBe(true);
    }
    for (const recap of recaps) expect(recap.path).toMatch(/^\/weekly-recap-[a-z]+-\d{1,2}$/);
    expect(copy.synthetic[0]).toMatchObject({ date: FIRST_SYNTHETIC_WEEK, path: '/weekly-recap-february-2-2026' });
  });

  it('serves 2026-02-02 at /weekly-recap-february-2-2026 with previous/next links, and lists it in the sitemap', async () => {
    const response = await fetch(`${base}/weekly-recap-february-2-2026`);
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(`<link rel="canonical" href="${SITE_URL}/weekly-recap-february-2-2026" />`);
    expect(html).toContain(copy.synthetic[0]!.headline);
    // Across the new year the link names the year; within it, the short date.
    expect(html).toMatch(/href="\/weekly-recap-july-14"[^>]*>← Week of <!-- -->July 14, 2025</);
    expect(html).toMatch(/href="\/weekly-recap-february-9-2026"[^>]*>Week of <!-- -->Feb 9<!-- --> →</);
    // The 2025 week of the same day is still its own page.
    expect((await fetch(`${base}/weekly-recap-february-2`)).status).toBe(200);
    const data = (await (await fetch(`${base}/data/recaps/weekly-recap-february-2-2026.json`)).json()) as { previous: { path: string }; next: { path: string } };
    expect([data.previous.path, data.next.path]).toEqual(['/weekly-recap-july-14', '/weekly-recap-february-9-2026']);

    const sitemap = await (await fetch(`${base}/sitemap.xml`)).text();
    // Every public week and the three other pages; the coming week is not there yet.
    expect(sitemap.match(/<loc>/g)).toHaveLength(TOTAL_WEEKS - 1 + 3);
    expect(sitemap).not.toContain(`<loc>${SITE_URL}${coming().path}</loc>`);
    expect(sitemap).toContain(`<loc>${SITE_URL}/weekly-recap-february-2-2026</loc>`);
  });

  it('keeps the newest 20 weeks in the feed, each at its year’s address', async () => {
    const feed = await (await fetch(`${base}/rss.xml`)).text();
    const links = [...feed.matchAll(/<link>([^<]+)<\/link>/g)].map((m) => m[1]).filter((link) => link !== `${SITE_URL}/`);
    const newest = copy.synthetic.filter((week) => !week.coming).slice(-20).reverse();
    expect(links).toEqual(newest.map((week) => `${SITE_URL}${week.path}`));
  });

  it('hides the coming week from its page, and sends a test of it with npm run digest -- --recap WEEK --to EMAIL', async () => {
    expect(coming().coming).toBe(true);
    expect((await fetch(`${base}${coming().path}`)).status).toBe(404);
    const digestData = join(dataDir, 'digest-coming');
    const env = { DATA_DIR: digestData, SITE_URL, NODE_ENV: 'development' };
    const { stdout } = await copy.node(['bin/digest.ts', '--recap', coming().date, '--to', 'curator@example.com'], env);
    expect(stdout).toContain(`Recap: ${coming().date}`);
    const files = (await readdir(join(digestData, 'outbox'))).filter((file) => file.endsWith('.eml'));
    expect(files).toHaveLength(1);
    const eml = (await readFile(join(digestData, 'outbox', files[0]!), 'utf8')).replace(/=\r?\n/g, '');
    expect(eml).toMatch(/^Subject: \[Test\] /m);
    expect(eml).toContain(coming().headline);
    // Sent to the list it is refused until its time: nothing more is written.
    const refused = await copy.node(['bin/digest.ts', '--recap', coming().date], env).then(
      () => null,
      (error: { code: number; stdout: string }) => error,
    );
    expect(refused?.code).toBe(1);
    expect(refused?.stdout).toContain('is not public until');
    expect((await readdir(join(digestData, 'outbox'))).filter((file) => file.endsWith('.eml'))).toHaveLength(1);
  }, 240_000);

  it('links the Monday e-mail of 2026-02-02 to its page', async () => {
    // Its own data folder: the running server holds the embedded database of the other.
    const digestData = join(dataDir, 'digest');
    const { stdout } = await copy.node(['bin/digest.ts', '--recap', FIRST_SYNTHETIC_WEEK, '--to', 'reader@example.com'], {
      DATA_DIR: digestData,
      SITE_URL,
      NODE_ENV: 'development',
    });
    expect(stdout).toContain('/weekly-recap-february-2-2026');
    const outbox = join(digestData, 'outbox');
    const files = (await readdir(outbox)).filter((file) => file.endsWith('.eml'));
    expect(files).toHaveLength(1);
    // Quoted-printable folds long lines with a trailing '=' and writes '=' as '=3D'.
    const eml = (await readFile(join(outbox, files[0]!), 'utf8')).replace(/=\r?\n/g, '').replaceAll('=3D', '=');
    // The web version is linked through the site's /go/ link of the week, named by its page's path.
    expect(eml).toContain(`${SITE_URL}/go/weekly-recap-february-2-2026/page`);
    expect(eml).not.toContain(`${SITE_URL}/go/weekly-recap-february-2/`);
    // A whole CLI process (tsx, a fresh embedded database, its migrations): seconds on an idle
    // machine, much longer on a loaded CI runner.
  }, 180_000);
});
