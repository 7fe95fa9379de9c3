// The operator's report on the embedded defaults, after what a real first week brings: readers
// sign up in Chromium on two pages, `npm run digest` writes the Monday e-mail to the outbox, one
// reader unsubscribes with the button behind the link in their .eml, and Resend reports a bounce
// through the signed webhook. Then `npm run report` prints the figures, and Chromium opens the
// file it wrote, with JavaScript off and no network, and finds the charts showing the database's
// counts.
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { chromiumAvailable, launchChromium } from '../support/browser.ts';
import { npmRun } from '../support/cli.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';

const WEBHOOK_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const READERS = [
  { email: 'ada@readers.test', page: '/' },
  { email: 'grace@readers.test', page: '/' },
  { email: 'linus@readers.test', page: '/about' },
  { email: 'margaret@readers.test', page: '/' },
];
const LEAVER = 'grace@readers.test';
const BOUNCER = 'linus@readers.test';

let dataDir: string;
let browser: Browser;

// The embedded defaults: no SITE_URL, database or mail settings; the secret is the test server's,
// so the links the digest writes are ones that server accepts.
const runScript = (script: string, args: string[]) => npmRun(script, args, { DATA_DIR: dataDir, UNSUBSCRIBE_SECRET: TEST_UNSUBSCRIBE_SECRET, LOG_LEVEL: 'silent' });

/** The site on the data directory's embedded database, for as long as `steps` run. */
async function withSite(steps: (server: TestServer) => Promise<void>) {
  const store = await openPGliteStore(dataDir);
  const server = await startTestServer({ store, config: { resendWebhookSecret: WEBHOOK_SECRET } });
  try {
    await steps(server);
  } finally {
    await server.close();
    await store.close();
  }
}

/** The .eml written to `email`: its file name and its header block, unfolded (RFC 5322 §2.2.3). */
async function emlFor(email: string): Promise<{ name: string; headers: string[] }> {
  const dir = join(dataDir, 'outbox');
  for (const name of await readdir(dir)) {
    const head = (await readFile(join(dir, name), 'utf8')).split(/\r?\n\r?\n/, 1)[0]!.replace(/\r?\n(?=[ \t])/g, '');
    const headers = head.split(/\r?\n/);
    if (headers.includes(`To: ${email}`)) return { name, headers };
  }
  throw new Error(`no .eml to ${email}`);
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'lw-report-'));
  if (chromiumAvailable) browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe.skipIf(!chromiumAvailable)('npm run report after a first week on the embedded defaults', () => {
  it('readers sign up in the browser, the digest goes out, one leaves, one bounces', async () => {
    await withSite(async (server) => {
      const page = await browser.newPage();
      for (const reader of READERS) {
        await page.goto(`${server.url}${reader.page}`);
        await page.waitForSelector('#email-signup form[novalidate]');
        await page.getByPlaceholder('Enter your email').fill(reader.email);
        await page.getByRole('button', { name: 'Subscribe' }).click();
        await page.locator('[data-sonner-toast]', { hasText: 'You’re In!' }).or(page.locator('[data-sonner-toast]', { hasText: "You're In!" })).first().waitFor();
      }
      await page.close();
    });

    const digest = await runScript('digest', ['--recap', '2025-07-14', '--json']);
    expect(digest.code, digest.stderr).toBe(0);
    expect(JSON.parse(digest.stdout)).toMatchObject({ outcome: 'sent', sent: READERS.length });

    await withSite(async (server) => {
      // The reader follows the unsubscribe link in their e-mail and presses the button.
      const header = (await emlFor(LEAVER)).headers.find((line) => line.startsWith('List-Unsubscribe: <'))!;
      const link = new URL(header.slice('List-Unsubscribe: <'.length, -1).replace(/\s+/g, ''));
      const page = await browser.newPage();
      await page.goto(`${server.url}${link.pathname}${link.search}`);
      await page.getByRole('button', { name: 'Unsubscribe' }).click();
      await page.getByRole('heading', { name: 'You are unsubscribed' }).waitFor();
      await page.close();

      // Resend reports that the message to BOUNCER bounced, naming the message by the id the
      // mailer got back when sending it (the outbox's file name).
      const messageId = (await emlFor(BOUNCER)).name;
      const body = JSON.stringify({
        type: 'email.bounced',
        created_at: new Date().toISOString(),
        data: { email_id: messageId, to: [BOUNCER], subject: 'Week of July 14, 2025', bounce: { type: 'Permanent', subType: 'General', message: 'No such mailbox' } },
      });
      const id = `msg_${randomBytes(8).toString('hex')}`;
      const at = new Date();
      const headers = { 'content-type': 'application/json', 'svix-id': id, 'svix-timestamp': String(Math.floor(at.getTime() / 1000)), 'svix-signature': new Webhook(WEBHOOK_SECRET).sign(id, at, body) };
      const response = await fetch(`${server.url}/webhooks/resend`, { method: 'POST', body, headers });
      expect(await response.json()).toMatchObject({ status: 'processed', removed: 1 });
    });
  }, 120_000);

  it('writes a self-contained page and prints the figures; Chromium finds the charts showing the database’s counts', async () => {
    // What the database holds, read directly.
    const store = await openPGliteStore(dataDir);
    const active = (await store.countSubscribers()).active;
    const states = await Promise.all(READERS.map(async (r) => (await store.findSubscriberByEmail(r.email))!.active));
    const delivered = await store.countDeliveries('2025-07-14');
    await store.close();
    expect({ active, delivered, activeReaders: states.filter(Boolean).length }).toEqual({ active: 2, delivered: 4, activeReaders: 2 });

    const out = join(dataDir, 'report', 'index.html');
    const result = await runScript('report', ['--out', out]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`Subscribers: ${active} active · 0 pending · 1 unsubscribed · 1 bounced · 0 complained`);
    expect(result.stdout).toContain('Signups: 4 this week · 4 in the last 4 weeks · top source / (3)');
    expect(result.stdout).toContain(`Last send: Week of July 14, 2025 · ${delivered} sent · 0 failed · 0 unknown · 0 skipped · bounces 1 (25.00 % ABOVE 0.3 %) · complaints 0 (0.00 %)`);
    expect(result.stdout).toMatch(/Next run: \d{4}-\d\d-\d\d 09:00 UTC \(0 9 \* \* 1, UTC\) · .*pre-send checks: \d passed/);
    expect(result.stdout).toContain(`Report written to ${out}`);

    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 900, height: 1200 } });
    const page = await context.newPage();
    const requests: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    await page.goto(pathToFileURL(out).href);
    const screenshot = join(dataDir, 'report.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    expect((await stat(screenshot)).size).toBeGreaterThan(50_000);
    expect(requests).toEqual([pathToFileURL(out).href]);
    expect(await page.locator('script').count()).toBe(0);

    // Four charts, each an inline SVG drawn by Vega.
    for (const section of ['subscribers', 'signups', 'sources', 'sends']) {
      await expect(page.locator(`#${section} figure svg.marks`).count(), section).resolves.toBe(1);
    }
    const week = await page.locator('#subscribers table tbody tr').first().locator('td').first().textContent();
    const label = (w: string) => new Date(`${w}T00:00:00Z`).toLocaleDateString('en-US', { month: 'short', day: 'numeric', timeZone: 'UTC' });
    const marks = (section: string) => page.locator(`#${section} svg [aria-label]`).evaluateAll((nodes) => nodes.map((n) => n.getAttribute('aria-label')));
    const subscriberMarks = await marks('subscribers');
    for (const [state, count] of [['active', active], ['unsubscribed', 1], ['bounced', 1], ['pending', 0], ['complained', 0]] as const) {
      expect(subscriberMarks, state).toContain(`week starting: ${label(week!)}; subscribers: ${count}; state: ${state}`);
      await expect(page.locator(`#totals [data-state="${state}"] b`).textContent()).resolves.toBe(String(count));
    }
    expect(await marks('signups')).toContain(`week starting: ${label(week!)}; new signups: 4`);
    expect(await marks('sources')).toEqual(expect.arrayContaining(['signups (all time): 3; page: /', 'signups (all time): 1; page: /about']));
    expect(await marks('sends')).toContain('recap: 2025-07-14; percent of messages sent: 25; kind: bounce rate');
    await expect(page.locator('#sends svg').textContent()).resolves.toContain('0.3 % line');

    const row = page.locator('#sends tr[data-recap="2025-07-14"] td');
    await expect(row.nth(1).textContent()).resolves.toBe(String(delivered));
    for (const column of [2, 3, 4]) await expect(row.nth(column).textContent()).resolves.toBe('0'); // failed, unknown, skipped
    await expect(row.nth(5).textContent()).resolves.toBe('1 (25.00 %)');
    await expect(row.nth(5).getAttribute('class')).resolves.toBe('over');
    await expect(page.locator('#sends .advice').textContent()).resolves.toContain('bounces at 25.00 %, above the 0.3 % line');
    await expect(page.locator('#next-run').textContent()).resolves.toMatch(/Pre-send checks on Week of July 14, 2025.*HTML under Gmail’s clipping size \(pass\)/);
    await context.close();
  }, 120_000);
});
