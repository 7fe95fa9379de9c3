// Publication time: the newest week of the content, seen from 08:59 on its Monday, is a
// coming week. One server, one clock moved forward: before 09:00 every public surface acts as if the
// week did not exist; from 09:00 every one shows it, with no restart. Its preview link shows it to
// whoever holds the link, never to a cache or a search engine, and an altered link is refused.
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockReading } from '../support/clocks.ts';
import { recaps } from '../../content/index.ts';
import { recapPathFor } from '../../content/dates.ts';
import { startDigestScheduler } from '../../jobs/digest/scheduler.ts';
import { gatherReport } from '../../jobs/report/gather.ts';
import { headlineFigures } from '../../jobs/report/render.tsx';
import { runWeeklyDigest } from '../../server/mail/digest/run.ts';
import { createLogger } from '../../server/http/logger.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import { CLIENT_DIST } from '../../server/site/load-renderer.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { createPreviewToken } from '../../server/site/preview-token.ts';
import { chromiumAroundTests, chromiumAvailable } from '../support/browser.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';
import { addSignup } from '../support/store-ops.ts';

const coming = recaps[0]!;
const previous = recaps[1]!;
const BEFORE = new Date(`${coming.date}T08:59:00Z`);
const AT = new Date(`${coming.date}T09:00:00Z`);
// Text only this week has: its card title and its first product's name.
const COMING_TEXTS = [coming.title, coming.entries[0]!.name];

let server: TestServer;
let now = BEFORE;

beforeAll(async () => {
  for (const text of COMING_TEXTS) expect(recaps.filter((recap) => JSON.stringify(recap).includes(text)).map((r) => r.date)).toEqual([coming.date]);
  server = await startTestServer({ publishing: { recaps, clock: () => now, timeZone: 'UTC' } });
});
afterAll(() => server?.close());

const get = (path: string, headers: Record<string, string> = {}) => fetch(server.url + path, { headers, redirect: 'manual' });
const text = async (path: string) => (await get(path)).text();
const json = async <T>(path: string) => (await (await get(path)).json()) as T;
const slug = coming.path.slice(1);
const product = coming.entries[0]!.name;

/** What every public surface says about the coming week, as figures a test can compare. */
async function surfaces() {
  const home = await text('/');
  const archive = await text('/archive');
  const search = await text(`/archive?q=${encodeURIComponent(product)}`);
  const searchData = await json<{ search: { entries: { week: { date: string } }[] } }>(`/data/archive.json?q=${encodeURIComponent(product)}`);
  const archiveData = await json<{ total: number }>('/data/archive.json');
  const homeData = await json<{ latest: { date: string }[] }>('/data/home.json');
  const previousPage = await text(previous.path);
  const previousData = await json<{ next?: { path: string } }>(`/data/recaps/${previous.path.slice(1)}.json`);
  const rss = await get('/rss.xml');
  const rssBody = await rss.text();
  const sitemap = await text('/sitemap.xml');
  const card = await get(`/share/${coming.date}.png`);
  return {
    page: (await get(coming.path)).status,
    pageData: (await get(`/data/recaps/${slug}.json`)).status,
    shareCard: card.status,
    shareCardCacheControl: card.headers.get('cache-control'),
    home: home.includes(coming.title),
    homeNewest: homeData.latest[0]!.date,
    archive: archive.includes(coming.title),
    archiveTotal: archiveData.total,
    search: search.includes(coming.path),
    searchData: searchData.search.entries.some((entry) => entry.week.date === coming.date),
    previousLinksNext: previousPage.includes(`href="${coming.path}"`),
    previousDataNext: previousData.next?.path ?? null,
    rss: rssBody.includes(coming.path),
    rssCacheControl: rss.headers.get('cache-control'),
    sitemap: sitemap.includes(coming.path),
  };
}

describe('a coming week', () => {
  it('is absent from every public surface before 09:00 on its date, and on every one from 09:00, without a restart', async () => {
    now = BEFORE;
    const homeBefore = await get('/');
    const etagBefore = homeBefore.headers.get('etag')!;
    expect(await surfaces()).toEqual({
      page: 404,
      pageData: 404,
      shareCard: 404,
      // The 404 is revalidated on every use, so the card appears with its week.
      shareCardCacheControl: 'no-cache',
      home: false,
      homeNewest: previous.date,
      archive: false,
      archiveTotal: recaps.length - 1,
      search: false,
      searchData: false,
      previousLinksNext: false,
      previousDataNext: null,
      rss: false,
      // A reader's cache may keep the feed only until the week is due: 60 seconds at 08:59.
      rssCacheControl: 'public, max-age=60',
      sitemap: false,
    });
    // The previous week's card and the site itself are unaffected.
    expect((await get(`/share/${previous.date}.png`)).status).toBe(200);
    expect((await get(previous.path)).status).toBe(200);

    now = AT;
    expect(await surfaces()).toEqual({
      page: 200,
      pageData: 200,
      shareCard: 200,
      shareCardCacheControl: 'public, max-age=3600',
      home: true,
      homeNewest: coming.date,
      archive: true,
      archiveTotal: recaps.length,
      search: true,
      searchData: true,
      previousLinksNext: true,
      previousDataNext: coming.path,
      rss: true,
      rssCacheControl: 'public, max-age=3600',
      sitemap: true,
    });
    // The home page a browser revalidates with its 08:59 ETag is the new one, not a 304.
    expect(homeBefore.headers.get('cache-control')).toBe('no-cache');
    const revalidated = await get('/', { 'If-None-Match': etagBefore });
    expect(revalidated.status).toBe(200);
    expect(revalidated.headers.get('etag')).not.toBe(etagBefore);
  });

  it('hides its share card under every spelling the static server resolves to it, until 09:00', async () => {
    // Sent as written: fetch would resolve the dot segments itself before they reach the server.
    const rawStatus = (path: string) =>
      new Promise<number>((resolve, reject) => {
        const url = new URL(server.url);
        request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        })
          .on('error', reject)
          .end();
      });
    const encodedFirst = `/share/%${coming.date.charCodeAt(0).toString(16)}${coming.date.slice(1)}.png`;
    const spellings = [`/share/${coming.date}.png`, `//share/${coming.date}.png`, `/share//${coming.date}.png`, encodedFirst, `/share%2F${coming.date}.png`, `/share/./${coming.date}.png`, `/share/x/../${coming.date}.png`, `/x/../share/${coming.date}.png`];
    expect(encodedFirst).toBe(`/share/%32${coming.date.slice(1)}.png`);
    now = BEFORE;
    expect(await Promise.all(spellings.map(rawStatus))).toEqual(spellings.map(() => 404));
    now = AT;
    expect(await Promise.all(spellings.map(rawStatus))).toEqual(spellings.map(() => 200));
  });

  it('puts none of its text into any file of the client build', async () => {
    const files: string[] = [];
    const walk = async (dir: string) => {
      for (const name of await readdir(dir)) {
        const path = join(dir, name);
        if ((await stat(path)).isDirectory()) await walk(path);
        else files.push(path);
      }
    };
    await walk(CLIENT_DIST);
    expect(files.filter((file) => file.endsWith('.js')).length).toBeGreaterThan(0);
    const carrying: string[] = [];
    for (const file of files) {
      const content = await readFile(file, 'utf8');
      for (const coming of COMING_TEXTS) if (content.includes(coming)) carrying.push(`${file}: ${coming}`);
    }
    expect(carrying).toEqual([]);
  });
});

describe('a preview link', () => {
  let browser: Browser | undefined;
  chromiumAroundTests((connected) => (browser = connected));

  it.skipIf(!chromiumAvailable)('shows the coming page in Chromium as it will be, noindex and never cached publicly, with its e-mail', async () => {
    now = BEFORE;
    const token = createPreviewToken(coming.date, now, TEST_UNSUBSCRIBE_SECRET);
    const page = await browser!.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const response = await page.goto(`${server.url}${coming.path}?preview=${token}`, { waitUntil: 'networkidle' });
    expect(response!.status()).toBe(200);
    expect(response!.headers()['x-robots-tag']).toBe('noindex');
    expect(response!.headers()['cache-control']).toBe('private, no-store');
    expect(await page.locator('meta[name="robots"]').getAttribute('content')).toBe('noindex');
    expect(await page.locator('h1').first().textContent()).toContain('Week of');
    await expect.poll(() => page.locator('main').textContent()).toContain(coming.headline);
    for (const entry of coming.entries) expect(await page.locator('main').textContent()).toContain(entry.name);
    // As it will be at 09:00: its previous week is linked; there is no next one.
    expect(await page.locator(`a[href="${previous.path}"]`).count()).toBeGreaterThan(0);
    expect(await page.locator('[role="note"]').textContent()).toContain(`not public until Mon 14 Jul 2025 09:00 UTC`);
    // Still hidden from everyone else meanwhile.
    expect((await get(coming.path)).status).toBe(404);

    await page.getByRole('link', { name: 'See its e-mail as it will be sent' }).click();
    await page.waitForURL(/\/preview\/email\?preview=/);
    expect(await page.locator('[role="note"]').textContent()).toContain(`Subject: Week of July 14, 2025: ${coming.headline} · From: Launched Weekly <digest@localhost>`);
    for (const entry of coming.entries) expect(await page.locator('body').textContent()).toContain(entry.name);
    const email = await get(`/preview/email?preview=${token}&part=text`);
    expect(email.headers.get('cache-control')).toBe('private, no-store');
    expect(await email.text()).toMatch(new RegExp(`^Subject: Week of July 14, 2025: ${coming.headline.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\nFrom: `));
    // It hydrates like any page, and nothing on either preview is refused or broken.
    expect(problems).toEqual([]);
    await page.close();
  });

  it('is what npm run preview -- WEEK prints, with its e-mail link and when the week will be public and sent', async () => {
    now = BEFORE;
    const dataDir = await mkdtemp(join(tmpdir(), 'lw-preview-cli-'));
    try {
      const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'bin/preview.ts', coming.date], {
        cwd: fileURLToPath(new URL('../..', import.meta.url)),
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'test', DATA_DIR: dataDir, SITE_URL: server.url, UNSUBSCRIBE_SECRET: TEST_UNSUBSCRIBE_SECRET, DIGEST_CRON: '0 9 * * 1', DIGEST_TZ: 'UTC' },
      });
      const [pageLink, whenLine, emailLine] = stdout.split('\n');
      expect(pageLink).toMatch(new RegExp(`^${server.url}${coming.path}\\?preview=${coming.date}\\.[0-9a-z]+\\.[A-Za-z0-9_-]{43}$`));
      expect(whenLine).toContain('public Mon 14 Jul 09:00 UTC, e-mail 09:00 UTC');
      const page = await fetch(pageLink!);
      expect(page.status).toBe(200);
      expect(page.headers.get('x-robots-tag')).toBe('noindex');
      expect(await page.text()).toContain(coming.entries[0]!.note.slice(0, 60));
      const email = await fetch(emailLine!.replace('Its e-mail as it will be sent: ', ''));
      expect(email.status).toBe(200);
      expect((await get(coming.path)).status).toBe(404);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('answers an altered link with 403 and an expired one with 410, each with a page that says what to do', async () => {
    now = BEFORE;
    const token = createPreviewToken(coming.date, now, TEST_UNSUBSCRIBE_SECRET);
    const another = token.replace(coming.date, previous.date);
    for (const bad of [another, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, 'nonsense']) {
      for (const path of [`${coming.path}?preview=${bad}`, `/preview/email?preview=${bad}`]) {
        const response = await get(path);
        expect(response.status, path).toBe(403);
        expect(await response.text()).toContain('This preview link is not valid');
      }
    }
    const old = createPreviewToken(coming.date, new Date(BEFORE.getTime() - 8 * 86_400_000), TEST_UNSUBSCRIBE_SECRET);
    const expired = await get(`${coming.path}?preview=${old}`);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toContain(`Make a new one with npm run preview -- ${coming.date}`);
  });
});

describe('the Monday job', () => {
  // The content's previous week is 8 days older than the coming one; a freshness window of 10 days
  // lets the schedule still choose it, so the choice itself is what is compared.
  const FRESHNESS_DAYS = 10;

  it('chooses the previous week before 09:00 and the coming one from 09:00, in a dry run and on the schedule', async () => {
    const store = await openPGliteStore(null);
    const outbox = await mkdtemp(join(tmpdir(), 'lw-publishing-outbox-'));
    try {
      for (let i = 0; i < 3; i++) await addSignup(store, `reader${i}@example.com`, '/');
      const mailer = new OutboxMailer({ dir: outbox, from: 'Launched Weekly <digest@localhost>' });
      const common = { store, mailer, recaps, siteUrl: server.url, unsubscribeSecret: TEST_UNSUBSCRIBE_SECRET, freshnessDays: FRESHNESS_DAYS, timezone: 'UTC' };
      const dryRun = (at: Date) => runWeeklyDigest({ ...common, now: at, mode: 'manual', dryRun: true });
      expect(await dryRun(BEFORE)).toMatchObject({ outcome: 'dry-run', recap: { date: previous.date } });
      expect(await dryRun(AT)).toMatchObject({ outcome: 'dry-run', recap: { date: coming.date } });

      let clock = BEFORE;
      const scheduler = startDigestScheduler({
        ...common,
        cron: '0 9 * * 1',
        timezone: 'UTC',
        logger: createLogger({ level: 'silent', pretty: false }),
        clock: clockReading(() => clock),
      });
      try {
        const early = await scheduler.runNow();
        expect(early).toMatchObject({ outcome: 'sent', recap: { date: previous.date }, sent: 3 });
        clock = AT;
        const onTime = await scheduler.runNow();
        expect(onTime).toMatchObject({ outcome: 'sent', recap: { date: coming.date }, sent: 3 });
      } finally {
        await scheduler.stop();
      }
      const sent = (await readdir(outbox)).filter((name) => name.endsWith('.eml'));
      expect(sent).toHaveLength(6);
    } finally {
      await store.close();
      await rm(outbox, { recursive: true, force: true });
    }
  });
});

describe('the operator’s report', () => {
  it('says when each coming week will be public and e-mailed, and warns of an e-mail before its page', async () => {
    const store = await openPGliteStore(null);
    try {
      const week = (date: string) => ({ ...coming, date, path: recapPathFor(date) });
      const withComing = [week('2026-12-07'), week('2026-11-30'), ...recaps];
      const now = new Date('2026-11-25T12:00:00Z');
      const report = (cron: string) => gatherReport({ store, recaps: withComing, now, siteUrl: 'https://launchedweekly.test', production: false, digest: { cron, timezone: 'UTC', freshnessDays: 7 } });
      const onTime = headlineFigures(await report('0 9 * * 1'));
      expect(onTime.filter((line) => line.startsWith('Coming'))).toEqual([
        'Coming: Week of November 30, 2026 · public Mon 30 Nov 09:00 UTC, e-mail 09:00 UTC',
        'Coming: Week of December 7, 2026 · public Mon 7 Dec 09:00 UTC, e-mail 09:00 UTC',
      ]);
      const early = headlineFigures(await report('0 8 * * 1'));
      expect(early.filter((line) => line.includes('warning: the e-mail would go out before the page is public'))).toHaveLength(2);
      const none = headlineFigures(await gatherReport({ store, recaps, now, siteUrl: 'https://launchedweekly.test', production: false, digest: { cron: '0 9 * * 1', timezone: 'UTC', freshnessDays: 7 } }));
      expect(none).toContain('Coming weeks: none (every week in content/recaps is public)');
    } finally {
      await store.close();
    }
  });
});
