// `npm run subscribers -- import` killed midway (SIGKILL once it reports its first chunk), then run
// again: after the kill every address is as it was or as the file says, never in between, and no
// one who unsubscribed, bounced or complained (in the file or before) would be mailed; the rerun
// finishes the job and its summary counts every row. On the embedded PGlite and on PostgreSQL.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { openPostgresStore } from '../../server/store/postgres.ts';
import type { Store, SubscriberStatus } from '../../server/store/types.ts';
import { storedMailboxKey, subscriberKeys } from '../../server/subscribers/subscriber-keys.ts';
import { createTestDatabase, postgresUrl } from '../support/postgres.ts';
import { addSignup, allSubscriberRecords, listActiveSubscribers } from '../support/store-ops.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SECRET = 'import-test-secret-0123456789abcdef0123456789abcdef';

interface Kind {
  name: string;
  available: boolean;
  /** The environment the CLI runs with, and a way to open the same store in the test. */
  prepare(dir: string): Promise<{ env: Record<string, string>; open(): Promise<Store>; drop(): Promise<void> }>;
}

const kinds: Kind[] = [
  {
    name: 'PGlite',
    available: true,
    async prepare(dir) {
      const dataDir = join(dir, 'data');
      return { env: { DATA_DIR: dataDir }, open: () => openPGliteStore(dataDir), drop: async () => {} };
    },
  },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    async prepare(dir) {
      const db = await createTestDatabase();
      return { env: { DATA_DIR: join(dir, 'data'), DATABASE_URL: db.url }, open: () => openPostgresStore(db.url, { max: 2 }), drop: () => db.drop() };
    },
  },
];

const STATES = ['active', 'active', 'pending', 'unsubscribed', 'bounced', 'complained'] as const;
const LEFT = new Set<SubscriberStatus>(['unsubscribed', 'bounced', 'complained']);
const ROWS = 6_000;

/** Runs the CLI; with `killAfterChunk`, SIGKILLs it as soon as it reports its first chunk. */
function runImport(env: Record<string, string>, file: string, killAfterChunk: boolean): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/subscribers.ts', 'import', file], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NODE_ENV: 'test', UNSUBSCRIBE_SECRET: SECRET, ...env },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      if (killAfterChunk && /rows imported/.test(stderr)) child.kill('SIGKILL');
    });
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

async function states(store: Store): Promise<Map<string, SubscriberStatus>> {
  return new Map((await allSubscriberRecords(store)).map((row) => [row.email, row.status]));
}

for (const kind of kinds) {
  describe.skipIf(!kind.available)(`an import killed midway on ${kind.name}`, { timeout: 240_000 }, () => {
    let dir: string;
    let prepared: Awaited<ReturnType<Kind['prepare']>>;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'lw-import-'));
      prepared = await kind.prepare(dir);
    });
    afterEach(async () => {
      await prepared?.drop();
      await rm(dir, { recursive: true, force: true });
    });

    it('leaves everyone as before or as the file says; the rerun finishes and counts every row', async () => {
      // Before: two active readers the file says left, one who unsubscribed and one who complained
      // (the file says active), and one deleted after a bounce (only the keyed hash is left).
      const before = new Map<string, SubscriberStatus>();
      const store = await prepared.open();
      try {
        for (const [email, state] of [
          ['was.active.1@example.org', 'active'],
          ['was.active.2@example.org', 'active'],
          ['was.unsubscribed@example.org', 'unsubscribed'],
          ['was.complained@example.org', 'complained'],
          ['was.deleted@example.org', 'bounced'],
        ] as const) {
          await addSignup(store, email, '/');
          const { id } = (await store.findSubscriberByEmail(email))!;
          if (state !== 'active') await store.removeSubscriber(id, state);
          before.set(email, state);
        }
        // The hash the CLI will compute: the database's mailbox key, made on first use.
        const [hash] = await subscriberKeys(SECRET, [], storedMailboxKey(store)).addressHashes('was.deleted@example.org');
        await store.deleteSubscriber((await store.findSubscriberByEmail('was.deleted@example.org'))!.id, hash!);
        before.delete('was.deleted@example.org');
      } finally {
        await store.close();
      }

      const file = new Map<string, SubscriberStatus>();
      for (let i = 0; i < ROWS; i++) file.set(`reader.${i}@example.org`, STATES[i % STATES.length]!);
      const againstList: [string, SubscriberStatus][] = [
        ['was.active.1@example.org', 'complained'],
        ['was.active.2@example.org', 'unsubscribed'],
        ['was.unsubscribed@example.org', 'active'],
        ['was.complained@example.org', 'active'],
        ['was.deleted@example.org', 'active'],
      ];
      for (const [email, state] of againstList) file.set(email, state);
      // Spread over the file, so the kill falls between some of them.
      const spread = [...file].filter(([email]) => !email.startsWith('was.'));
      againstList.forEach((row, n) => spread.splice(Math.floor(((n + 0.5) * spread.length) / againstList.length), 0, row));
      const csv = join(dir, 'list.csv');
      await writeFile(csv, `email,status\n${spread.map(([email, state]) => `${email},${state}`).join('\n')}\n`);
      const final = (email: string): SubscriberStatus => {
        const expected: Record<string, SubscriberStatus> = {
          'was.active.1@example.org': 'complained',
          'was.active.2@example.org': 'unsubscribed',
          'was.unsubscribed@example.org': 'unsubscribed',
          'was.complained@example.org': 'complained',
          'was.deleted@example.org': 'bounced',
        };
        return expected[email] ?? file.get(email)!;
      };

      const killed = await runImport(prepared.env, csv, true);
      expect(killed.signal).toBe('SIGKILL');
      const afterKill = await (async () => {
        const opened = await prepared.open();
        try {
          return await states(opened);
        } finally {
          await opened.close();
        }
      })();
      const done = [...file.keys()].filter((email) => afterKill.get(email) === final(email)).length;
      expect(done, 'some rows were imported before the kill').toBeGreaterThan(0);
      expect(done, 'the kill came before the end').toBeLessThan(file.size);
      for (const email of new Set([...file.keys(), ...before.keys()])) {
        const now = afterKill.get(email);
        expect([before.get(email), final(email)], `${email} is ${now}`).toContain(now);
        // Whoever had left before, or is new and left in the file, is never active or pending.
        const left = LEFT.has(before.get(email)!) || (!before.has(email) && LEFT.has(final(email)));
        if (left) expect(now === 'active' || now === 'pending', `${email} would be mailed`).toBe(false);
      }

      const rerun = await runImport(prepared.env, csv, false);
      expect(rerun.code).toBe(0);
      const summary = /Imported .*: (\d+) added, (\d+) already present, (\d+) left alone \(unsubscribed, bounced or complained: an import never reactivates them\), (\d+) recorded as left, 0 invalid rows skipped\./.exec(rerun.stderr);
      expect(summary, rerun.stderr).not.toBeNull();
      expect(summary!.slice(1).map(Number).reduce((a, b) => a + b, 0)).toBe(file.size);
      const opened = await prepared.open();
      try {
        const afterRerun = await states(opened);
        for (const email of file.keys()) expect(afterRerun.get(email), email).toBe(final(email));
        const active = new Set((await listActiveSubscribers(opened, null, 100_000)).map((s) => s.email));
        // Nobody unsubscribed, bounced or complained, in the file or before, is on the digest's list.
        for (const email of file.keys()) expect(active.has(email), email).toBe(final(email) === 'active');
      } finally {
        await opened.close();
      }
    });
  });
}
