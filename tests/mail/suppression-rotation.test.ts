// Through the real app on PGlite and PostgreSQL: the suppression list of deleted
// complainers survives any number of rotations of UNSUBSCRIBE_SECRET. Its hashes are keyed by a key
// the database keeps (app_keys), not by the link secret; a hash made the old way (of the exact
// address, under the secret of the day) is still matched while that secret is the current or the
// previous one, and re-keyed to the mailbox's own hash when it matches.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { runWeeklyDigest } from '../../server/mail/digest/run.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { storedMailboxKey, subscriberKeys } from '../../server/subscribers/subscriber-keys.ts';
import { readOutbox, settledOutbox } from '../support/outbox.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { appStoreKinds } from '../support/store-backends.ts';

const SECRETS = ['rotation-secret-0-0123456789abcdef0123456789', 'rotation-secret-1-0123456789abcdef0123456789', 'rotation-secret-2-0123456789abcdef0123456789', 'rotation-secret-3-0123456789abcdef0123456789'];

for (const kind of appStoreKinds) {
  describe.skipIf(!kind.available)(`Suppression across three rotations of UNSUBSCRIBE_SECRET on ${kind.name}`, () => {
    let store: Store;
    let drop: () => Promise<void>;

    beforeAll(async () => {
      const opened = await kind.open();
      // One store kept across the four servers (each a deploy with the next secret).
      store = opened.store ?? (await openPGliteStore(null));
      drop = async () => {
        if (!opened.store) await store.close();
        await opened.drop();
      };
    });
    afterAll(async () => {
      await drop?.();
    });

    async function withServer<T>(generation: number, mode: 'single' | 'double', work: (server: TestServer) => Promise<T>): Promise<T> {
      const server = await startTestServer({
        store,
        config: { signupConfirmation: mode, unsubscribeSecret: SECRETS[generation]!, unsubscribeSecretPrevious: generation > 0 ? SECRETS[generation - 1] : undefined },
      });
      try {
        return await work(server);
      } finally {
        await server.close();
      }
    }

    const signUp = async (server: TestServer, email: string) => {
      const response = await fetch(`${server.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
      return { status: response.status, body: (await response.json()) as unknown };
    };
    const statusOf = async (email: string) => (await store.findSubscriberByEmail(email))?.status ?? null;

    /** A subscriber who complained, then had their data deleted, the hash kept made as `hashIndex` says. */
    async function deletedComplainer(server: TestServer, email: string, secret: string, hashIndex: number) {
      expect((await signUp(server, email)).status).toBe(201);
      const { id } = (await store.findSubscriberByEmail(email))!;
      await store.removeSubscriber(id, 'complained');
      const hashes = await subscriberKeys(secret, [], storedMailboxKey(store)).addressHashes(email);
      expect(await store.deleteSubscriber(id, hashes[hashIndex]!)).toBe('complained');
      expect(await statusOf(email)).toBeNull();
    }

    it('three rotations later, a deleted complainer signing up (another spelling, either mode) is not active and gets no digest', async () => {
      await withServer(0, 'single', async (server) => {
        expect((await signUp(server, 'member@example.com')).status).toBe(201);
        // As the app deletes today: the hash of the mailbox under the database's key.
        await deletedComplainer(server, 'Pat.Smith@gmail.com', SECRETS[0]!, 0);
        // As a delete before this change left it: the exact address under the link secret.
        await deletedComplainer(server, 'legacy.complainer@example.com', SECRETS[0]!, 1);
      });
      // First rotation: the old-style hash still matches under the previous secret, and is re-keyed to
      // the mailbox's hash, which is what other spellings are found by after further rotations.
      await withServer(1, 'single', async (server) => {
        expect(await signUp(server, 'legacy.complainer@example.com')).toEqual({ status: 202, body: { status: 'confirmation_sent' } });
        expect(await statusOf('legacy.complainer@example.com')).toBe('complained');
      });
      await withServer(2, 'single', async () => {});

      const spellings = { single: ['p.a.t.smith+back@googlemail.com', 'Legacy.Complainer+again@example.com'], double: ['patsmith@gmail.com', 'legacy.complainer+2@example.com'] } as const;
      for (const mode of ['single', 'double'] as const) {
        await withServer(3, mode, async (server) => {
          for (const email of spellings[mode]) {
            expect(await signUp(server, email), email).toEqual({ status: 202, body: { status: 'confirmation_sent' } });
            expect(await statusOf(email.toLowerCase()), email).toBe('complained');
          }
          // The owner's way back stays open: at most one confirmation per mailbox in 30 days.
          const mails = await settledOutbox(server);
          expect(mails.every((eml) => eml.subject === 'Confirm your subscription to Launched Weekly')).toBe(true);
          expect(mails.filter((eml) => eml.to.includes('smith')).length).toBeLessThanOrEqual(1);
          expect(mails.filter((eml) => eml.to.includes('legacy')).length).toBeLessThanOrEqual(1);
        });
      }

      const digestOutbox = await mkdtemp(join(tmpdir(), 'lw-rotation-digest-'));
      try {
        await runWeeklyDigest({
          store,
          mailer: new OutboxMailer({ dir: digestOutbox, from: 'Launched Weekly <digest@launchedweekly.test>' }),
          recaps,
          now: new Date('2025-07-15T09:00:00Z'),
          siteUrl: 'http://localhost:3000',
          unsubscribeSecret: SECRETS[3]!,
          mode: 'scheduled',
          freshnessDays: 7,
        });
        expect((await readOutbox(digestOutbox)).map((eml) => eml.to)).toEqual(['member@example.com']);
      } finally {
        await rm(digestOutbox, { recursive: true, force: true });
      }
    });
  });
}
