// `npm run subscribers` as the operator runs it: a child process on the embedded store.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { storedMailboxKey, subscriberKeys } from '../../server/subscribers/subscriber-keys.ts';
import { addSignup } from '../support/store-ops.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(dataDir: string, ...args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      // What `npm run subscribers` runs once the build is current (the test run's global set-up
      // builds): the compiled command, not the sources compiled again on every call.
      ['dist/bin/subscribers.js', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, DATA_DIR: dataDir, NODE_ENV: 'test' }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

// The old Supabase table's export (id,email,created_at) with the mess real lists have.
const OLD_EXPORT = [
  'id,email,created_at',
  '7f1c1a52-0000-4000-8000-000000000001,ada@example.com,2025-02-03 10:00:00+00',
  '7f1c1a52-0000-4000-8000-000000000002,  Grace@Example.COM ,2025-03-01 09:00:00+00',
  '7f1c1a52-0000-4000-8000-000000000003,ADA@EXAMPLE.COM,2025-03-02 09:00:00+00',
  '7f1c1a52-0000-4000-8000-000000000004,not-an-address,2025-03-03 09:00:00+00',
  '7f1c1a52-0000-4000-8000-000000000005,,2025-03-04 09:00:00+00',
  '',
  '7f1c1a52-0000-4000-8000-000000000006,linus@example.com,2025-03-05 09:00:00+00',
  '7f1c1a52-0000-4000-8000-000000000007,two@@example.com,2025-03-06 09:00:00+00',
].join('\n');

/** Where one run of these tests works: a temporary folder holding the CSV files and the data folder they import into. */
interface Ctx {
  dir: string;
  dataDir: string;
}

/** Importing, again and again, into one data folder. */
function importing(ctx: Ctx) {
  it('imports a CSV, reporting each unusable row by line, and counts the result', async () => {
    const imported = await run(ctx.dataDir, 'import', join(ctx.dir, 'old.csv'));
    expect(imported.code).toBe(0);
    expect(imported.stderr).toContain('line 5: skipped "not-an-address": An email address has exactly one @ sign.');
    expect(imported.stderr).toContain('line 6: skipped "": no address');
    expect(imported.stderr).toContain('line 9: skipped "two@@example.com"');
    expect(imported.stderr).toMatch(/3 added, 1 already present, 0 left alone \(unsubscribed, bounced or complained: an import never reactivates them\), 0 recorded as left, 3 invalid rows skipped/);

    const counted = await run(ctx.dataDir, 'count');
    expect(counted).toMatchObject({ code: 0, stdout: 'active: 3\nleft: 0\n' });
  });

  it('changes nothing when the same file is imported again', async () => {
    const again = await run(ctx.dataDir, 'import', join(ctx.dir, 'old.csv'));
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/0 added, 4 already present, 0 left alone \(unsubscribed, bounced or complained: an import never reactivates them\), 0 recorded as left, 3 invalid rows skipped/);
    expect((await run(ctx.dataDir, 'count')).stdout).toBe('active: 3\nleft: 0\n');
  });

  it('does not sign up again someone who unsubscribed', async () => {
    const store = await openPGliteStore(ctx.dataDir);
    try {
      const linus = await store.findSubscriberByEmail('linus@example.com');
      expect(await store.removeSubscriber(linus!.id, 'unsubscribed')).toBe(true);
    } finally {
      await store.close();
    }
    const mailchimp = ['Email Address,First Name,MEMBER_RATING', 'linus@example.com,Linus,2', 'new@example.com,New,1'].join('\r\n');
    await writeFile(join(ctx.dir, 'mailchimp.csv'), `\uFEFF${mailchimp}\r\n`);
    const imported = await run(ctx.dataDir, 'import', join(ctx.dir, 'mailchimp.csv'));
    expect(imported.stderr).toMatch(/1 added, 0 already present, 1 left alone \(unsubscribed, bounced or complained: an import never reactivates them\), 0 recorded as left, 0 invalid rows skipped/);
    expect((await run(ctx.dataDir, 'count')).stdout).toBe('active: 3\nleft: 1\n');
  });
}

/** Exporting, and importing an export into an empty data folder. */
function exportRoundTrips(ctx: Ctx) {
  it('exports every subscriber, and the export imports into an empty store as the same list', async () => {
    const out = join(ctx.dir, 'export.csv');
    const exported = await run(ctx.dataDir, 'export', '--out', out);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toContain(`Exported 4 subscribers (3 active, 1 left) to ${out}.`);
    const lines = (await readFile(out, 'utf8')).trim().split('\n');
    expect(lines[0]).toBe('email,status,reason,created_at');
    expect(lines.slice(1).map((line) => line.split(',').slice(0, 2).join(',')).sort()).toEqual([
      'ada@example.com,active',
      'grace@example.com,active',
      'linus@example.com,unsubscribed',
      'new@example.com,active',
    ]);
    for (const line of lines.slice(1)) expect(Number.isNaN(Date.parse(line.split(',')[3]!))).toBe(false);

    const toStdout = await run(ctx.dataDir, 'export');
    expect(toStdout.stdout.trim().split('\n')).toEqual(lines);

    const copy = join(ctx.dir, 'copy');
    const imported = await run(copy, 'import', out);
    expect(imported.stderr).toMatch(/3 added, 0 already present, 0 left alone \(unsubscribed, bounced or complained: an import never reactivates them\), 1 recorded as left, 0 invalid rows skipped/);
    expect((await run(copy, 'count')).stdout).toBe('active: 3\nleft: 1\n');
    const reexported = await run(copy, 'export');
    const pairs = (csv: string) => csv.trim().split('\n').slice(1).map((line) => line.split(',').slice(0, 2).join(',')).sort();
    expect(pairs(reexported.stdout)).toEqual(pairs(toStdout.stdout));
  });

  it('never reactivates a bounced, complained or deleted-after-complaint address, says how many it left alone, and round-trips their states', async () => {
    const store = await openPGliteStore(ctx.dataDir);
    try {
      for (const [email, reason] of [
        ['bounced@example.com', 'bounced'],
        ['complained@example.com', 'complained'],
        ['deleted@example.com', 'complained'],
      ] as const) {
        await addSignup(store, email, '/');
        await store.removeSubscriber((await store.findSubscriberByEmail(email))!.id, reason);
      }
      // Deleted at the owner's request: only the keyed hash of the mailbox stays, under the database's own key.
      const secret = (await readFile(join(ctx.dataDir, 'unsubscribe-secret'), 'utf8')).trim();
      const [hash] = await subscriberKeys(secret, [], storedMailboxKey(store)).addressHashes('deleted@example.com');
      await store.deleteSubscriber((await store.findSubscriberByEmail('deleted@example.com'))!.id, hash!);
    } finally {
      await store.close();
    }
    const list = ['email', 'bounced@example.com', 'Complained@Example.com', 'deleted@example.com', 'fresh@example.com'].join('\n');
    await writeFile(join(ctx.dir, 'bought.csv'), `${list}\n`);
    const imported = await run(ctx.dataDir, 'import', join(ctx.dir, 'bought.csv'));
    expect(imported.stderr).toMatch(/1 added, 0 already present, 3 left alone \(unsubscribed, bounced or complained: an import never reactivates them\), 0 recorded as left/);
    const after = await openPGliteStore(ctx.dataDir);
    try {
      const states = await Promise.all(['bounced', 'complained', 'deleted', 'fresh'].map(async (name) => (await after.findSubscriberByEmail(`${name}@example.com`))?.status));
      expect(states).toEqual(['bounced', 'complained', 'complained', 'active']);
    } finally {
      await after.close();
    }

    const exported = await run(ctx.dataDir, 'export');
    const rows = exported.stdout.trim().split('\n').map((line) => line.split(',').slice(0, 3).join(','));
    expect(rows).toEqual(expect.arrayContaining(['bounced@example.com,bounced,bounced', 'complained@example.com,complained,complained', 'fresh@example.com,active,']));
    await writeFile(join(ctx.dir, 'full-export.csv'), exported.stdout);
    const copy = join(ctx.dir, 'copy-with-states');
    await run(copy, 'import', join(ctx.dir, 'full-export.csv'));
    const again = await run(copy, 'export');
    const pairs = (csv: string) => csv.trim().split('\n').slice(1).map((line) => line.split(',').slice(0, 3).join(',')).sort();
    expect(pairs(again.stdout)).toEqual(pairs(exported.stdout));
  });
}

/** What the command says when it cannot do what it is asked. */
function refusals(ctx: Ctx) {
  it('explains bad arguments with the usage and exit code 2', async () => {
    for (const args of [[], ['frobnicate'], ['import'], ['import', 'a.csv', 'b.csv'], ['count', '--out', 'x.csv'], ['export', 'x.csv'], ['count', '--verbose']]) {
      const result = await run(ctx.dataDir, ...args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain('Usage: npm run subscribers -- <command>');
    }
  });

  it('says in one line what is wrong with a missing or unusable file', async () => {
    const missing = await run(ctx.dataDir, 'import', join(ctx.dir, 'nope.csv'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`subscribers: cannot read ${join(ctx.dir, 'nope.csv')}: no such file.\n`);

    await writeFile(join(ctx.dir, 'names.csv'), 'name,city\nAda,London\n');
    const noColumn = await run(ctx.dataDir, 'import', join(ctx.dir, 'names.csv'));
    expect(noColumn.code).toBe(1);
    expect(noColumn.stderr.trim().split('\n')).toHaveLength(1);
    expect(noColumn.stderr).toContain('has no email column');
  });

  it('refuses to open the embedded database while another process owns it', async () => {
    const owner = await openPGliteStore(ctx.dataDir);
    try {
      const result = await run(ctx.dataDir, 'count');
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^subscribers: The embedded database .* is in use by process \d+/);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      await owner.close();
    }
  });
}

describe('npm run subscribers', { timeout: 120_000 }, () => {
  const ctx = {} as Ctx;

  beforeAll(async () => {
    ctx.dir = await mkdtemp(join(tmpdir(), 'launched-weekly-cli-'));
    ctx.dataDir = join(ctx.dir, 'data');
    await writeFile(join(ctx.dir, 'old.csv'), OLD_EXPORT);
  });

  afterAll(async () => {
    await rm(ctx.dir, { recursive: true, force: true });
  });

  importing(ctx);
  exportRoundTrips(ctx);
  refusals(ctx);
});
