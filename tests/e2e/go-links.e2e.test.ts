// The digest's links through the site (GET /go/…), on PGlite and PostgreSQL, as readers meet them:
// the Monday job writes each reader's .eml, Chromium follows every /go/ link in it and lands on
// exactly the URL the e-mail linked to before (the launch, or the recap's page, with the e-mail's
// campaign parameters). The launch platform is a real external site, so Chromium resolves its name
// to a local HTTPS server with a throwaway certificate (--host-resolver-rules): its requests never
// leave the machine. (page.route cannot stand in: Playwright calls a route's handler only for the
// first URL of a redirect chain, and the launch is the second.) Then what is counted, from which
// client addresses (TRUST_PROXY=1, X-Forwarded-For), and what the counting leaves in the database.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import type { Recap } from '../../content/schema.ts';
import { withCampaign } from '../../content/site.ts';
import { runWeeklyDigest } from '../../server/mail/digest/run.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import { CLICK_WINDOW_SECONDS, CLICKS_PER_NETWORK_PER_WEEK } from '../../server/site/routes/go.ts';
import type { SqlClient } from '../../server/store/sql-client.ts';
import type { Store } from '../../server/store/types.ts';
import { CHROMIUM_FLAGS, CHROMIUM_PATH, chromiumAvailable } from '../support/browser.ts';
import { linksIn, readOutbox } from '../support/outbox.ts';
import { rowsNaming } from '../support/rows-naming.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';
import { sqlBackends } from '../support/sql-backends.ts';
import { addSignup } from '../support/store-ops.ts';

const WEEK = recaps.find((recap) => recap.date === '2025-07-14')!;
const BEFORE_PUBLICATION = new Date('2025-07-14T08:00:00Z');
const AFTER_PUBLICATION = new Date('2025-07-14T12:00:00Z');
const READERS = ['ada@readers.test', 'grace@readers.test'];
// Headless Chromium says "HeadlessChrome", which the robot list rightly matches; a reader's browser does not.
const READER_AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const ROBOT_AGENT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

/** What the e-mail linked to before /go/ existed: the launch (or the page) with the e-mail's campaign parameters. */
function linkedBefore(recap: Recap, siteUrl: string, entry: string): string {
  const placement = { medium: 'email', week: recap.date } as const;
  if (entry === 'page') return withCampaign(`${siteUrl}${recap.path}`, placement);
  return withCampaign(recap.entries.find((launch) => String(launch.rank) === entry)!.url, placement);
}

const LAUNCH_HOST = new URL(WEEK.entries[0]!.url).hostname;

/** The launch platform's stand-in: HTTPS on loopback under a certificate made for this run; it notes every URL asked for. */
async function startLaunchSite(dir: string): Promise<{ server: Server; asked: string[] }> {
  const [key, cert] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
  await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', `/CN=${LAUNCH_HOST}`]);
  const asked: string[] = [];
  const server = createServer({ key: await readFile(key), cert: await readFile(cert) }, (req, res) => {
    asked.push(`https://${req.headers.host}${req.url}`);
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>A launch</title><link rel="icon" href="data:,"><h1>A launch</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, asked };
}

let browser: Browser | undefined;
let launchSite: { server: Server; asked: string[] } | undefined;
let certDir: string;
beforeAll(async () => {
  if (!chromiumAvailable) return;
  certDir = await mkdtemp(join(tmpdir(), 'lw-go-cert-'));
  launchSite = await startLaunchSite(certDir);
  const { port } = launchSite.server.address() as AddressInfo;
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: [...CHROMIUM_FLAGS, `--host-resolver-rules=MAP ${LAUNCH_HOST} 127.0.0.1:${port}`], headless: true });
});
afterAll(async () => {
  await browser?.close();
  launchSite?.server.close();
  if (certDir) await rm(certDir, { recursive: true, force: true });
});

/** One test's world, made afresh before each test: a database, the app on it with a clock the test can move, and the digest's outbox. */
interface Ctx {
  store: Store;
  sql: SqlClient;
  cleanup: () => Promise<void>;
  server: TestServer;
  outbox: string;
  now: Date;
}

/** The Monday job for WEEK, run by hand on the test's clock into the test's outbox. */
function digest(ctx: Ctx, options: { testRecipient?: string } = {}) {
  return runWeeklyDigest({
    store: ctx.store,
    mailer: new OutboxMailer({ dir: ctx.outbox, from: 'Launched Weekly <digest@localhost>' }),
    recaps,
    now: ctx.now,
    siteUrl: ctx.server.url,
    unsubscribeSecret: TEST_UNSUBSCRIBE_SECRET,
    mode: 'manual',
    recapWeek: WEEK.date,
    freshnessDays: 30,
    timezone: 'UTC',
    ...options,
  });
}

/** Asks the app for a path as a client would, without following the redirect. */
function go(ctx: Ctx, path: string, init: RequestInit & { from?: string; agent?: string; prefetch?: boolean } = {}) {
  return fetch(`${ctx.server.url}${path}`, {
    redirect: 'manual',
    ...init,
    headers: {
      'user-agent': init.agent ?? READER_AGENT,
      ...(init.from ? { 'x-forwarded-for': init.from } : {}),
      ...(init.prefetch ? { 'sec-purpose': 'prefetch' } : {}),
    },
  });
}

/** How many clicks are counted for one entry of WEEK. */
async function clicksOf(ctx: Ctx, entry: string) {
  return (await ctx.store.engagementCounts()).clicks.find((row) => row.recapDate === WEEK.date && row.entry === entry)?.clicks ?? 0;
}

/** Where each /go/ link leads, and the links that lead nowhere. */
function whereLinksLead(ctx: Ctx) {
  it.skipIf(!chromiumAvailable)("Chromium follows every /go/ link of a reader's .eml to exactly the URL the e-mail linked before", async () => {
    for (const email of READERS) await addSignup(ctx.store, email, '/');
    expect(await digest(ctx)).toMatchObject({ outcome: 'sent', sent: READERS.length });
    const eml = (await readOutbox(ctx.outbox)).find((mail) => mail.to === READERS[0])!;
    const links = linksIn(eml, `${ctx.server.url}/go/`);
    const entries = [...WEEK.entries.map((launch) => String(launch.rank)), 'page'];
    expect(links).toEqual(entries.map((entry) => `${ctx.server.url}/go${WEEK.path}/${entry}`));
    // The plain-text part carries the same links.
    for (const link of links) expect(eml.text).toContain(link);

    // The certificate is this run's own, so this browser context accepts it.
    const context = await browser!.newContext({ userAgent: READER_AGENT, ignoreHTTPSErrors: true });
    launchSite!.asked.length = 0;
    const page = await context.newPage();
    for (const [index, link] of links.entries()) {
      const entry = entries[index]!;
      await page.goto(link);
      const landed = new URL(page.url());
      expect(page.url(), link).toBe(linkedBefore(WEEK, ctx.server.url, entry));
      expect(Object.fromEntries([...landed.searchParams].filter(([name]) => name.startsWith('utm_')))).toEqual({
        utm_source: 'launched-weekly',
        utm_medium: 'email',
        utm_campaign: `weekly-recap-${WEEK.date}`,
      });
    }
    await context.close();
    expect(launchSite!.asked).toEqual(WEEK.entries.map((launch) => linkedBefore(WEEK, ctx.server.url, String(launch.rank))));
    // Each link followed once, each counted once.
    for (const entry of entries) expect(await clicksOf(ctx, entry), entry).toBe(1);
  });

  it('answers 404, never a redirect, for an unknown week or entry, or an absolute URL anywhere in the link', async () => {
    const notFound = await go(ctx, '/go/weekly-recap-july-15/1');
    expect(notFound.status).toBe(404);
    const page404 = await notFound.text();
    const paths = [
      `/go${WEEK.path}/0`,
      `/go${WEEK.path}/11`,
      `/go${WEEK.path}/01`,
      `/go${WEEK.path}/launch`,
      `/go${WEEK.path}`,
      `/go/2025-07-14/1`,
      `/go${WEEK.path}/1/2`,
      `/go/https://evil.example/1`,
      `/go/https%3A%2F%2Fevil.example/1`,
      `/go${WEEK.path}/https%3A%2F%2Fevil.example`,
      `/go${WEEK.path}/1?to=https://evil.example`,
      `/go${WEEK.path}/1?https%3A%2F%2Fevil.example`,
      `/go//evil.example/1`,
      `/go/%2F%2Fevil.example/1`,
    ];
    for (const path of paths) {
      const response = await go(ctx, path);
      expect(response.status, path).toBe(404);
      expect(response.headers.get('location'), path).toBeNull();
      await response.arrayBuffer();
    }
    expect(page404).toContain('</html>');
    expect((await ctx.store.engagementCounts()).clicks).toEqual([]);
  });

  it('a coming week acts as if it did not exist: its test copy’s /go/ links are 404 until publication, then lead on', async () => {
    ctx.now = BEFORE_PUBLICATION;
    expect(await digest(ctx, { testRecipient: 'curator@readers.test' })).toMatchObject({ outcome: 'test-sent' });
    const links = linksIn((await readOutbox(ctx.outbox))[0]!, `${ctx.server.url}/go/`);
    expect(links).toHaveLength(11);
    const unknownWeek = await (await go(ctx, '/go/weekly-recap-july-15/1')).text();
    for (const link of links) {
      const response = await go(ctx, new URL(link).pathname);
      expect(response.status, link).toBe(404);
      expect(await response.text(), link).toBe(unknownWeek);
    }
    ctx.now = AFTER_PUBLICATION;
    const response = await go(ctx, new URL(links[0]!).pathname);
    expect(response.status).toBe(302);
    expect(response.headers.get('location')).toBe(linkedBefore(WEEK, ctx.server.url, '1'));
  });
}

/** What a click counts, what it never counts, and what counting leaves in the database. */
function clickCounting(ctx: Ctx) {
  it('counts clicks per week and entry: 10 addresses 10, one address 5 times 1, HEAD, robots and prefetches 0; no row names a reader, token or address', async () => {
    for (const email of READERS) await addSignup(ctx.store, email, '/');
    const ids = await Promise.all(READERS.map(async (email) => (await ctx.store.findSubscriberByEmail(email))!.id));
    expect(await digest(ctx)).toMatchObject({ outcome: 'sent', sent: READERS.length });
    const tokens = (await readOutbox(ctx.outbox)).flatMap((mail) => [...mail.html.matchAll(/token=([^"&]+)/g)].map((m) => m[1]!));
    expect(tokens.length).toBeGreaterThan(0);
    // The list and the ledger name the readers, as they must; the clicks below must add no such row.
    const namingBefore = await rowsNaming(ctx.sql, [...ids, ...READERS, ...tokens]);
    const addresses = Array.from({ length: 10 }, (_, i) => `203.0.113.${i + 1}`);
    const expectRedirect = async (response: Response, entry: string) => {
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(linkedBefore(WEEK, ctx.server.url, entry));
      expect(response.headers.get('cache-control')).toBe('no-store');
    };
    for (const from of addresses) await expectRedirect(await go(ctx, `/go${WEEK.path}/3`, { from }), '3');
    for (let i = 0; i < 5; i += 1) await expectRedirect(await go(ctx, `/go${WEEK.path}/4`, { from: addresses[0] }), '4');
    await expectRedirect(await go(ctx, `/go${WEEK.path}/5`, { method: 'HEAD', from: addresses[1] }), '5');
    await expectRedirect(await go(ctx, `/go${WEEK.path}/6`, { agent: ROBOT_AGENT, from: addresses[2] }), '6');
    await expectRedirect(await go(ctx, `/go${WEEK.path}/7`, { agent: 'curl/8.5.0', from: addresses[3] }), '7');
    await expectRedirect(await go(ctx, `/go${WEEK.path}/8`, { prefetch: true, from: addresses[4] }), '8');
    const counted = Object.fromEntries(await Promise.all(['3', '4', '5', '6', '7', '8'].map(async (entry) => [entry, await clicksOf(ctx, entry)])));
    expect(counted).toEqual({ 3: 10, 4: 1, 5: 0, 6: 0, 7: 0, 8: 0 });

    // Once the window has passed, the same client's click is a new one.
    ctx.now = new Date(AFTER_PUBLICATION.getTime() + (CLICK_WINDOW_SECONDS + 1) * 1000);
    await expectRedirect(await go(ctx, `/go${WEEK.path}/4`, { from: addresses[0] }), '4');
    expect(await clicksOf(ctx, '4')).toBe(2);

    expect(await rowsNaming(ctx.sql, [...ids, ...READERS, ...tokens])).toEqual(namingBefore);
    expect(await rowsNaming(ctx.sql, addresses)).toEqual([]);
    // What the window holds instead: keyed hashes, none of which is an address.
    const window = await ctx.sql.query<{ click_key: string }>('select click_key from public.link_click_window');
    expect(window.rows.length).toBeGreaterThan(0);
    for (const row of window.rows) expect(row.click_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('one network moves a launch by at most its weekly cap, past it every request still gets its redirect and writes nothing but the counter', async () => {
    const minutesLater = (minutes: number) => new Date(AFTER_PUBLICATION.getTime() + minutes * 60_000);
    const tableSizes = async () => {
      const result = await ctx.sql.query<{ window: string; counters: string }>(
        'select (select count(*) from public.link_click_window) as window, (select count(*) from public.signup_rate_limits) as counters',
      );
      return { window: Number(result.rows[0]!.window), counters: Number(result.rows[0]!.counters) };
    };
    // One IPv4 client, a new request every 11 minutes: each one outside the repeat window.
    for (let i = 0; i < CLICKS_PER_NETWORK_PER_WEEK; i += 1) {
      ctx.now = minutesLater(11 * i);
      expect((await go(ctx, `/go${WEEK.path}/2`, { from: '198.51.100.7' })).status).toBe(302);
    }
    expect(await clicksOf(ctx, '2')).toBe(CLICKS_PER_NETWORK_PER_WEEK);
    const atCap = await tableSizes();
    for (let i = CLICKS_PER_NETWORK_PER_WEEK; i < CLICKS_PER_NETWORK_PER_WEEK + 20; i += 1) {
      ctx.now = minutesLater(11 * i);
      const response = await go(ctx, `/go${WEEK.path}/2`, { from: '198.51.100.7' });
      expect(response.status).toBe(302);
      expect(response.headers.get('location')).toBe(linkedBefore(WEEK, ctx.server.url, '2'));
    }
    expect(await clicksOf(ctx, '2')).toBe(CLICKS_PER_NETWORK_PER_WEEK);
    expect(await tableSizes()).toEqual(atCap);
    // The cap is per entry and per network: another launch, and a neighbour's address, still count.
    expect((await go(ctx, `/go${WEEK.path}/9`, { from: '198.51.100.7' })).status).toBe(302);
    expect((await go(ctx, `/go${WEEK.path}/2`, { from: '198.51.100.8' })).status).toBe(302);
    expect(await clicksOf(ctx, '9')).toBe(1);
    expect(await clicksOf(ctx, '2')).toBe(CLICKS_PER_NETWORK_PER_WEEK + 1);

    // Rotating through the /56 networks of one routed /48 is one network to the cap.
    for (let subnet = 0; subnet < 3 * CLICKS_PER_NETWORK_PER_WEEK; subnet += 1) {
      expect((await go(ctx, `/go${WEEK.path}/10`, { from: `2001:db8:7:${(subnet * 256).toString(16)}::1` })).status).toBe(302);
    }
    expect(await clicksOf(ctx, '10')).toBe(CLICKS_PER_NETWORK_PER_WEEK);
  });

  it('a click leaves the expired window rows to housekeeping, which removes exactly those', async () => {
    for (const [index, from] of ['192.0.2.1', '192.0.2.2', '192.0.2.3'].entries()) {
      expect((await go(ctx, `/go${WEEK.path}/${index + 1}`, { from })).status).toBe(302);
    }
    ctx.now = new Date(AFTER_PUBLICATION.getTime() + (CLICK_WINDOW_SECONDS + 1) * 1000);
    expect((await go(ctx, `/go${WEEK.path}/1`, { from: '192.0.2.9' })).status).toBe(302);
    // The same client's click after its window counts again, taking over its expired row.
    expect((await go(ctx, `/go${WEEK.path}/1`, { from: '192.0.2.1' })).status).toBe(302);
    expect(await clicksOf(ctx, '1')).toBe(3);
    const windowRows = async () => Number((await ctx.sql.query<{ n: string }>('select count(*) as n from public.link_click_window')).rows[0]!.n);
    expect(await windowRows()).toBe(4);
    expect(await ctx.store.pruneLinkClickWindow(ctx.now)).toBe(2);
    expect(await windowRows()).toBe(2);
    // The rows still inside their window keep working: a repeat is not counted again.
    expect((await go(ctx, `/go${WEEK.path}/1`, { from: '192.0.2.9' })).status).toBe(302);
    expect(await clicksOf(ctx, '1')).toBe(3);
  });
}

for (const backend of sqlBackends) {
  describe.skipIf(!backend.available)(`/go/ links on ${backend.name}`, () => {
    const ctx = {} as Ctx;

    beforeEach(async () => {
      ({ store: ctx.store, sql: ctx.sql, cleanup: ctx.cleanup } = await backend.open());
      ctx.now = AFTER_PUBLICATION;
      ctx.server = await startTestServer({ store: ctx.store, config: { trustProxy: 1 }, publishing: { recaps, clock: () => ctx.now, timeZone: 'UTC' } });
      ctx.outbox = await mkdtemp(join(tmpdir(), 'lw-go-outbox-'));
    });
    afterEach(async () => {
      await ctx.server.close();
      await ctx.cleanup();
      await rm(ctx.outbox, { recursive: true, force: true });
    });

    whereLinksLead(ctx);
    clickCounting(ctx);
  });
}
