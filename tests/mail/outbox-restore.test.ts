// A database restored from a backup taken ten minutes earlier reuses none of the provider's
// idempotency keys: keys are random per message, not the row's id. With ids from a sequence, the
// confirmations requested after the restore took the ids of those sent after the backup, still in
// the provider's 24-hour memory: a 409 (settled unknown, never sent) or a replayed 200 (marked sent,
// never sent). PostgreSQL restores a copy made with `create database … template`; PGlite a copy of
// its data directory taken while it was closed, as a file backup of the embedded database is.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOutboxWorker } from '../../server/mail/outbox-worker.ts';
import { ResendMailer } from '../../server/mail/resend.ts';
import { subscriberMail } from '../../server/mail/subscriber-mail.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { openPostgresStore } from '../../server/store/postgres.ts';
import type { Store } from '../../server/store/types.ts';
import { startFakeResend, type FakeResend } from '../support/fake-resend.ts';
import { createTestDatabase, postgresUrl } from '../support/postgres.ts';

interface Restorable {
  open(): Promise<Store>;
  /** Copies the database as it is now (the store closed meanwhile). */
  backUp(): Promise<void>;
  /** Puts the copy back in place of the database (the store closed meanwhile). */
  restore(): Promise<void>;
  drop(): Promise<void>;
}

async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: postgresUrl! });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

const kinds: { name: string; available: boolean; make(): Promise<Restorable> }[] = [
  {
    name: 'PGlite',
    available: true,
    async make() {
      const dir = await mkdtemp(join(tmpdir(), 'launched-weekly-restore-'));
      const data = join(dir, 'data');
      const backup = join(dir, 'backup');
      return {
        open: () => openPGliteStore(data),
        backUp: () => cp(join(data, 'db'), backup, { recursive: true }),
        async restore() {
          await rm(join(data, 'db'), { recursive: true, force: true });
          await cp(backup, join(data, 'db'), { recursive: true });
        },
        drop: () => rm(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    async make() {
      const db = await createTestDatabase();
      const snapshot = `${db.name}_backup`;
      return {
        open: () => openPostgresStore(db.url, { max: 2 }),
        backUp: () => adminQuery(`create database ${snapshot} template ${db.name}`),
        async restore() {
          await adminQuery(`drop database ${db.name} with (force)`);
          await adminQuery(`create database ${db.name} template ${snapshot}`);
        },
        async drop() {
          await db.drop();
          await adminQuery(`drop database if exists ${snapshot} with (force)`);
        },
      };
    },
  },
];

const compose = subscriberMail({ siteUrl: 'https://launched.test', secret: 'outbox-restore-secret-0123456789abcdef0123456789' });

for (const kind of kinds) {
  describe.skipIf(!kind.available)(`Confirmations after a restore on ${kind.name}`, () => {
    let fake: FakeResend;
    let database: Restorable;
    let store: Store | null = null;

    beforeAll(async () => {
      fake = await startFakeResend();
      database = await kind.make();
    });
    afterAll(async () => {
      await store?.close();
      await fake?.close();
      await database?.drop();
    });

    async function confirm(emails: string[]): Promise<void> {
      for (const email of emails) expect((await store!.signUp({ email, source: '/', mode: 'double', networkHash: null, addressHashes: [] })).outcome).toBe('send_confirmation');
      const mailer = new ResendMailer({ apiKey: 're_test', baseUrl: fake.url, from: 'Launched Weekly <news@launched.test>' });
      const worker = createOutboxWorker({ store: store!, mailer: async () => mailer, compose, log: { info: () => {}, warn: () => {} } });
      await worker.deliverDue();
      await worker.stop();
    }

    const arrived = (email: string) => fake.messages.filter((m) => m.to.includes(email));

    it('sends every confirmation requested after the restore as a new message', async () => {
      store = await database.open();
      await confirm(['before@example.com']);
      await store.close();
      await database.backUp();

      store = await database.open();
      await confirm(['after.one@example.com', 'after.two@example.com', 'after.three@example.com']);
      await store.close();
      await database.restore();
      // Ten minutes on: the provider still holds every key it was sent.
      fake.clock = () => Date.now() + 10 * 60_000;

      store = await database.open();
      const again = ['again.one@example.com', 'again.two@example.com', 'again.three@example.com'];
      await confirm(again);
      expect(again.map((email) => arrived(email).length)).toEqual([1, 1, 1]);
      expect(fake.requests.filter((r) => r.kind === 'replayed' || r.kind === 'idempotency-conflict')).toEqual([]);
      expect(await store.outboxSummary(7)).toMatchObject({ sent: 4, unknown: 0, failed: 0, queued: 0, retrying: 0 });
    }, 60_000);
  });
}
