// The Monday job on the embedded defaults, as an operator runs it: `npm run digest` as a real
// child process on PGlite in a temporary DATA_DIR, with the outbox mailer writing .eml files. Then
// a mail client's one-click unsubscribe, with the token taken from one of those files.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DigestReport } from '../../server/mail/digest/run.ts';
import { createApp } from '../../server/app.ts';
import { createLogger } from '../../server/http/logger.ts';
import { CLIENT_DIST, loadBuiltRenderer } from '../../server/site/load-renderer.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { startDigestCli, type CliResult } from '../support/cli.ts';
import { addSignup } from '../support/store-ops.ts';

const SECRET = 'outbox-test-secret-0123456789abcdef0123456789';
const SITE_URL = 'https://launchedweekly.test';
const ACTIVE = 30;

let dataDir: string;
const outboxDir = () => join(dataDir, 'outbox');

function runCli(args: string[]): Promise<CliResult> {
  return startDigestCli(args, { DATA_DIR: dataDir, UNSUBSCRIBE_SECRET: SECRET, SITE_URL, DIGEST_TZ: 'UTC', LOG_LEVEL: 'silent' }).done;
}

const reportOf = (result: CliResult) => JSON.parse(result.stdout) as DigestReport;

interface Eml {
  name: string;
  headers: Record<string, string>;
  raw: string;
}

/** Header block unfolded (RFC 5322 §2.2.3), names lower-cased. */
function parseEml(name: string, raw: string): Eml {
  const head = raw.split(/\r?\n\r?\n/, 1)[0]!.replace(/\r?\n(?=[ \t])/g, '');
  const headers: Record<string, string> = {};
  for (const line of head.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { name, headers, raw };
}

/** The body of the MIME part with this content type, quoted-printable decoded. */
function part(eml: Eml, contentType: string): string {
  const boundary = /boundary="([^"]+)"/.exec(eml.headers['content-type'] ?? '')?.[1];
  if (!boundary) return '';
  const section = eml.raw.split(`--${boundary}`).find((s) => s.includes(`Content-Type: ${contentType}`)) ?? '';
  const body = section.split(/\r?\n\r?\n/).slice(1).join('\n\n');
  return Buffer.from(body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))), 'latin1').toString('utf8');
}

async function outbox(): Promise<Eml[]> {
  const names = (await readdir(outboxDir()).catch(() => [] as string[])).filter((n) => n.endsWith('.eml')).sort();
  return Promise.all(names.map(async (name) => parseEml(name, await readFile(join(outboxDir(), name), 'utf8'))));
}

const subscriberEmails = Array.from({ length: ACTIVE }, (_, i) => `reader${String(i + 1).padStart(2, '0')}@example.com`);

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'lw-digest-outbox-'));
  const store = await openPGliteStore(dataDir);
  for (const email of [...subscriberEmails, 'left.in.june@example.com', 'left.in.may@example.com']) await addSignup(store, email, '/');
  for (const email of ['left.in.june@example.com', 'left.in.may@example.com']) await store.removeSubscriber((await store.findSubscriberByEmail(email))!.id, 'unsubscribed');
  await store.close();
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

/** The site's app on a local port, serving from `store` while `visit` runs against its address. */
async function withSite(store: Store, visit: (url: string) => Promise<void>): Promise<void> {
  const server: Server = createServer();
  try {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    server.on(
      'request',
      createApp({
        config: { env: 'test', siteUrl: url, trustProxy: 0, rateLimitPerMinute: 100, unsubscribeSecret: SECRET },
        store,
        renderer: await loadBuiltRenderer(),
        logger: createLogger({ level: 'silent', pretty: false }),
        assets: { kind: 'static', dir: CLIENT_DIST },
      }),
    );
    await visit(url);
  } finally {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}

/** The real run, then the rerun that finds the week already sent. */
function sendingTheWeek() {
  it('leaves one .eml per active subscriber, each with both unsubscribe headers and both parts', async () => {
    const result = await runCli(['--json']);
    expect(result.code, result.stderr).toBe(0);
    const report = reportOf(result);
    expect(report).toMatchObject({ outcome: 'sent', sent: ACTIVE, skippedAlreadySent: 0, failed: [] });
    expect(report.recap?.date).toBe('2025-07-14');
    expect(result.stderr).toContain('Mailer: outbox');
    expect(result.stderr).toMatch(/sent 30\/30 \(100% done\)/);

    const files = await outbox();
    expect(files).toHaveLength(ACTIVE);
    expect(files.map((f) => f.headers.to).sort()).toEqual(subscriberEmails);
    for (const eml of files) {
      expect(eml.headers['list-unsubscribe']).toMatch(/^<https:\/\/launchedweekly\.test\/unsubscribe\?token=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}>$/);
      expect(eml.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
      expect(eml.headers.subject).toBe('Week of July 14, 2025: Data & Automation Tools Lead the Innovation Wave');
      expect(eml.headers.from).toBe('Launched Weekly <digest@localhost>');
      expect(eml.headers['content-type']).toMatch(/^multipart\/alternative;/);
      const text = part(eml, 'text/plain');
      const html = part(eml, 'text/html');
      // Launches are linked through the site's /go/ links, which count the click and lead on (tests/e2e/go-links.e2e.test.ts).
      expect(text).toContain('#1 Flowjoinery https://launchedweekly.test/go/weekly-recap-july-14/1');
      expect(html).toContain('>Flowjoinery</a>');
      // Each copy carries its own subscriber's link, in the header and in both parts.
      const link = eml.headers['list-unsubscribe']!.slice(1, -1);
      expect(text).toContain(link);
      expect(html).toContain(link);
    }
    expect(new Set(files.map((f) => f.headers['list-unsubscribe'])).size).toBe(ACTIVE);
  });

  it('sends nothing on a second run and says why', async () => {
    const result = await runCli([]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Nothing to send: Week of July 14, 2025 already went to every active subscriber (30).');
    expect(result.stdout).toMatch(/skipped, already sent:\s+30/);
    expect(await outbox()).toHaveLength(ACTIVE);
  });
}

/** Runs that leave the ledger as the real run wrote it: a dry run, a test message, refused arguments. */
function dryRunTestMessageAndRefusals() {
  it('--dry-run counts and writes nothing', async () => {
    const result = await runCli(['--dry-run', '--recap', '/weekly-recap-july-6', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(reportOf(result)).toMatchObject({ outcome: 'dry-run', sent: ACTIVE, recap: { date: '2025-07-06' } });
    expect(await outbox()).toHaveLength(ACTIVE);
  });

  it('--to writes one test message and leaves the ledger alone', async () => {
    const result = await runCli(['--to', 'Operator@Example.com', '--json']);
    expect(result.code, result.stderr).toBe(0);
    expect(reportOf(result)).toMatchObject({ outcome: 'test-sent', sent: 1 });
    const files = await outbox();
    expect(files).toHaveLength(ACTIVE + 1);
    const test = files.filter((f) => f.name.startsWith('test-'));
    expect(test).toHaveLength(1);
    expect(test[0]!.headers.to).toBe('operator@example.com');
    expect(test[0]!.headers.subject).toMatch(/^\[Test\] Week of July 14, 2025/);
    expect(test[0]!.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
  });

  it('refuses bad arguments with the usage and exit code 2', async () => {
    for (const args of [['--recap', '1999-01-04'], ['--to', 'not-an-address'], ['--fast']]) {
      const result = await runCli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('Usage: npm run digest -- [--dry-run] [--recap WEEK] [--to EMAIL]');
    }
  });
}

/** What the runs left behind: a working unsubscribe link, their history, and a mail outbox that still gets delivered. */
function unsubscribeHistoryAndMailOutbox() {
  it('unsubscribes on a mail client’s one-click POST to the link in an .eml, and the next run skips that reader', async () => {
    const [first] = (await outbox()).filter((f) => !f.name.startsWith('test-'));
    const link = new URL(first!.headers['list-unsubscribe']!.slice(1, -1));
    const store = await openPGliteStore(dataDir);
    try {
      await withSite(store, async (url) => {
        // Exactly what RFC 8058 has a mail client send.
        const response = await fetch(`${url}${link.pathname}${link.search}`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'List-Unsubscribe=One-Click',
          redirect: 'manual',
        });
        expect(response.status).toBe(200);
        expect(response.headers.get('location')).toBeNull();
        expect((await store.findSubscriberByEmail(first!.headers.to!))?.active).toBe(false);
        // The --to test earlier left the ledger as the real run wrote it.
        expect(await store.countDeliveries('2025-07-14')).toBe(ACTIVE);
      });
    } finally {
      await store.close();
    }

    const next = await runCli(['--recap', '2025-07-06', '--json']);
    expect(next.code, next.stderr).toBe(0);
    expect(reportOf(next)).toMatchObject({ outcome: 'sent', sent: ACTIVE - 1 });
    const july6 = (await outbox()).filter((f) => f.name.startsWith('2025-07-06-'));
    expect(july6).toHaveLength(ACTIVE - 1);
    expect(july6.map((f) => f.headers.to)).not.toContain(first!.headers.to);
  });

  it('--history lists every run of this data directory, newest first: digests, the rerun, the dry run and the test', async () => {
    const result = await runCli(['--history']);
    expect(result.code, result.stderr).toBe(0);
    // The table of runs, then (after a blank line) the mail outbox of the last 7 days.
    const [table, ...after] = result.stdout.trim().split('\n\n');
    const rows = table!.split('\n');
    expect(rows[0]).toMatch(/^run\s+started \(UTC\)\s+kind\s+recap\s+outcome\s+sent/);
    expect(after.join('\n')).toMatch(/^Mail outbox \(confirmations, welcomes, notices\), last 7 days: \d+ queued · \d+ retrying · \d+ failed · \d+ sent/m);
    const outcomes = rows.slice(1).map((row) => /\b(manual|dry-run|test)\s+(\S+)\s+(\S+)\s+(\d+)/.exec(row)?.slice(1));
    expect(outcomes.length).toBeGreaterThanOrEqual(5);
    // Oldest last: the first real run sent to everyone, the rerun found nothing to do.
    expect(outcomes.at(-1)).toEqual(['manual', '2025-07-14', 'sent', String(ACTIVE)]);
    expect(outcomes.at(-2)).toEqual(['manual', '2025-07-14', 'already-sent', '0']);
    expect(outcomes).toContainEqual(['dry-run', '2025-07-06', 'dry-run', String(ACTIVE)]);
    expect(outcomes).toContainEqual(['test', '2025-07-14', 'test-sent', '1']);
    expect(outcomes[0]).toEqual(['manual', '2025-07-06', 'sent', String(ACTIVE - 1)]);
  });

  it('delivers what the mail outbox holds when it runs alone: a notice and a confirmation promised while no server ran', async () => {
    const store = await openPGliteStore(dataDir);
    try {
      await store.enqueueMail('operator', null, { to: 'notices@example.com', subject: '[Launched Weekly] waiting', text: 'Queued while the server was down.' });
      expect((await store.signUp({ email: 'late.reader@example.com', source: '/', mode: 'double', networkHash: null, addressHashes: [] })).outcome).toBe('send_confirmation');
    } finally {
      await store.close();
    }
    const result = await runCli([]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/outbox: operator #\d+ sent/);
    const files = await outbox();
    expect(files.filter((f) => f.headers.to === 'notices@example.com').map((f) => f.headers.subject)).toEqual(['[Launched Weekly] waiting']);
    expect(files.filter((f) => f.headers.to === 'late.reader@example.com').map((f) => f.headers.subject)).toEqual(['Confirm your subscription to Launched Weekly']);
    const history = await runCli(['--history']);
    expect(history.stdout).toMatch(/^Mail outbox \(confirmations, welcomes, notices\), last 7 days: 0 queued · 0 retrying · 0 failed · 2 sent$/m);
  });
}

// Each group builds on the runs before it (the outbox and the history accumulate), so they run in this order.
describe('npm run digest on the embedded defaults (PGlite + outbox)', () => {
  sendingTheWeek();
  dryRunTestMessageAndRefusals();
  unsubscribeHistoryAndMailOutbox();
});
