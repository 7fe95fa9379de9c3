// The report's clicks, on PGlite and PostgreSQL: two weeks sent, their /go/ clicks and Resend's
// delivered, opened and clicked counts in the store, then `npm run report` as the operator runs it
// (a separate process on the same database): the page shows each week's sent, delivered, opened
// (labelled approximate, with why), clicks and click rate, the week's launches ranked by clicks and
// the launches clicked most across the weeks, read in Chromium; `--json` prints the same figures,
// with each entry's /go/ path and URL; the W3C Nu checker finds the page valid.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { withCampaign } from '../../content/site.ts';
import type { Engagement } from '../../jobs/report/engagement.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { openPostgresStore } from '../../server/store/postgres.ts';
import type { Store } from '../../server/store/types.ts';
import { chromiumAroundTests } from '../support/browser.ts';
import { npmRun } from '../support/cli.ts';
import { createTestDatabase, postgresUrl } from '../support/postgres.ts';
import { TEST_UNSUBSCRIBE_SECRET } from '../support/server.ts';
import { addSignup, recordDeliveries } from '../support/store-ops.ts';

const SITE_URL = 'https://launchedweekly.test';
const run = promisify(execFile);
const vnuJar: string = createRequire(import.meta.url)('vnu-jar');
const javaAvailable = await run('java', ['-version']).then(
  () => true,
  () => false,
);

const NEWER = recaps.find((recap) => recap.date === '2025-07-14')!;
const OLDER = recaps.find((recap) => recap.date === '2025-07-06')!;
/** Clicks per entry of each week: the newer week's #3 most, #1 and #7 tied (rank breaks the tie). */
const CLICKS: Record<string, Record<string, number>> = { [NEWER.date]: { 3: 5, 1: 2, 7: 2, page: 1 }, [OLDER.date]: { 2: 4 } };

async function seed(store: Store) {
  const ids: string[] = [];
  for (let i = 0; i < 20; i += 1) {
    await addSignup(store, `reader${i}@readers.test`, '/');
    ids.push((await store.findSubscriberByEmail(`reader${i}@readers.test`))!.id);
  }
  await recordDeliveries(store, NEWER.date, ids.map((id, i) => ({ subscriberId: id, providerMessageId: `newer-${i}` })));
  await recordDeliveries(store, OLDER.date, ids.slice(0, 8).map((id, i) => ({ subscriberId: id, providerMessageId: `older-${i}` })));
  let client = 0;
  for (const [recapDate, entries] of Object.entries(CLICKS)) {
    for (const [entry, clicks] of Object.entries(entries)) {
      for (let i = 0; i < clicks; i += 1) {
        client += 1;
        expect(await store.recordLinkClick({ recapDate, entry, clickKey: `client-${client}`, at: new Date(), windowSeconds: 600 })).toBe(true);
      }
    }
  }
  const events = [...Array(18).fill('email.delivered'), ...Array(9).fill('email.opened'), ...Array(3).fill('email.clicked')] as ('email.delivered' | 'email.opened' | 'email.clicked')[];
  for (const [i, type] of events.entries()) {
    await store.countEmailEngagement({ svixId: `msg_${i}`, type, recapDate: NEWER.date, receivedAt: new Date() });
  }
}

const npmReport = (args: string[], env: Record<string, string>) =>
  npmRun('report', args, { UNSUBSCRIBE_SECRET: TEST_UNSUBSCRIBE_SECRET, SITE_URL, DIGEST_CRON: 'off', LOG_LEVEL: 'silent', ...env });

const launch = (rank: number) => NEWER.entries.find((entry) => entry.rank === rank)!;
const urlOf = (recap: typeof NEWER, rank: number) => withCampaign(recap.entries.find((entry) => entry.rank === rank)!.url, { medium: 'email', week: recap.date });

const kinds = [
  {
    name: 'PGlite',
    available: true,
    async open(dir: string) {
      const dataDir = join(dir, 'data');
      return { store: await openPGliteStore(dataDir), env: { DATA_DIR: dataDir }, drop: async () => {} };
    },
  },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    async open(dir: string) {
      const db = await createTestDatabase();
      return { store: await openPostgresStore(db.url), env: { DATA_DIR: join(dir, 'data'), DATABASE_URL: db.url }, drop: () => db.drop() };
    },
  },
];

let browser: Browser | undefined;
chromiumAroundTests((connected) => (browser = connected));

for (const kind of kinds) {
  describe.skipIf(!kind.available)(`the report's clicks on ${kind.name}`, () => {
    let dir: string;
    let env: Record<string, string>;
    let drop: () => Promise<void>;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lw-report-clicks-'));
      const opened = await kind.open(dir);
      ({ env, drop } = opened);
      try {
        await seed(opened.store);
      } finally {
        // The report is a process of its own; the embedded database has one owner at a time.
        await opened.store.close();
      }
    });
    afterAll(async () => {
      await drop?.();
      await rm(dir, { recursive: true, force: true });
    });

    it('npm run report -- --json prints each week’s reach, its entries ranked by clicks with their /go/ path and URL, and the top launches', async () => {
      const result = await npmReport(['--json'], env);
      expect(result.code, result.stderr).toBe(0);
      const { engagement } = JSON.parse(result.stdout) as { engagement: Engagement };
      const [newer, older] = engagement.weeks;
      expect(newer).toMatchObject({ recapDate: NEWER.date, sent: 20, delivered: 18, opened: 9, providerClicks: 3, clicks: 10, pageClicks: 1, clickRate: 0.5 });
      expect(older).toMatchObject({ recapDate: OLDER.date, sent: 8, delivered: 0, opened: 0, clicks: 4, clickRate: 0.5 });
      expect(newer!.entries.map((entry) => [entry.rank, entry.clicks])).toEqual([[3, 5], [1, 2], [7, 2], [2, 0], [4, 0], [5, 0], [6, 0], [8, 0], [9, 0], [10, 0]]);
      expect(newer!.entries[0]).toEqual({ rank: 3, name: launch(3).name, path: `/go${NEWER.path}/3`, url: urlOf(NEWER, 3), clicks: 5 });
      expect(engagement.topLaunches.map((top) => [top.recapDate, top.rank, top.clicks])).toEqual([
        [NEWER.date, 3, 5],
        [OLDER.date, 2, 4],
        [NEWER.date, 1, 2],
        [NEWER.date, 7, 2],
      ]);
      expect(engagement.openedNote).toMatch(/^Approximate: .*Apple Mail Privacy Protection/);
    }, 120_000);

    it('the page shows them, drawn and in tables, and passes the W3C Nu checker', async () => {
      const out = join(dir, 'report.html');
      const result = await npmReport(['--out', out], env);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(`Reach of the last send: 20 sent · 18 delivered · 9 opened (approximate) · 10 clicks (50.00 % click rate) · most clicked ${launch(3).name} (5)`);

      if (browser) {
        const context = await browser.newContext({ javaScriptEnabled: false });
        const page = await context.newPage();
        await page.goto(pathToFileURL(out).href);
        const cells = (selector: string) => page.locator(selector).locator('td').allTextContents();
        expect(await cells(`#clicks-weeks tr[data-recap="${NEWER.date}"]`)).toEqual(['Week of July 14, 2025', '20', '18', '9', '10', '50.00 %']);
        expect(await cells(`#clicks-weeks tr[data-recap="${OLDER.date}"]`)).toEqual(['Week of July 6, 2025', '8', '0', '0', '4', '50.00 %']);
        expect(await page.locator('#clicks-weeks th').nth(3).textContent()).toBe('opened (approximate)');
        await expect(page.locator('#opened-note').textContent()).resolves.toContain('Apple Mail Privacy Protection');
        const ranked = await page.locator(`#clicks details[data-recap="${NEWER.date}"] tbody tr`).evaluateAll((rows) => rows.map((row) => row.getAttribute('data-rank')));
        expect(ranked).toEqual(['3', '1', '7', '2', '4', '5', '6', '8', '9', '10']);
        expect(await cells(`#clicks details[data-recap="${NEWER.date}"] tbody tr[data-rank="3"]`)).toEqual([launch(3).name, '#3', '5']);
        expect(await page.locator('#top-launches tbody tr').evaluateAll((rows) => rows.map((row) => `${row.getAttribute('data-recap')} #${row.getAttribute('data-rank')}`))).toEqual([
          `${NEWER.date} #3`,
          `${OLDER.date} #2`,
          `${NEWER.date} #1`,
          `${NEWER.date} #7`,
        ]);
        // Two charts drawn by Vega, their marks labelled with the figures.
        const marks = await page.locator('#clicks svg [aria-label]').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('aria-label')));
        expect(marks).toEqual(expect.arrayContaining([`recap: ${NEWER.date}; clicks: 10`, `recap: ${OLDER.date}; clicks: 4`, `clicks: 5; launch: ${launch(3).name} (Jul 14)`]));
        await context.close();
      }

      if (javaAvailable) {
        const check = await run('java', ['-jar', vnuJar, '--errors-only', '--format', 'json', out]).catch((error: { stderr?: string }) => ({ stderr: error.stderr ?? '' }));
        const messages = (JSON.parse(check.stderr || '{"messages":[]}') as { messages: { type: string; subType?: string; message: string }[] }).messages;
        expect(messages.filter((message) => message.type === 'error' || message.subType === 'fatal')).toEqual([]);
      }
    }, 120_000);
  });
}
