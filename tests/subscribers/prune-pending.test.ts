// The Monday job removes double opt-in signups left unconfirmed for more than 30 days, and says
// how many; confirmed, younger and other subscribers stay. On every backend where the test can
// age a row the way 31 days would.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clockReading } from '../support/clocks.ts';
import { recaps } from '../../content/index.ts';
import { PENDING_DAYS } from '../../jobs/housekeeping/prune-pending.ts';
import { startDigestScheduler } from '../../jobs/digest/scheduler.ts';
import { createLogger } from '../../server/http/logger.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import type { SignupRequest } from '../../server/store/types.ts';
import { createConfirmToken, verifyConfirmToken } from '../../server/subscribers/signed-links.ts';
import { sqlBackends, type OpenedSqlBackend } from '../support/sql-backends.ts';
import { storeBackends, type OpenedBackend } from '../support/store-backends.ts';

const request = (email: string, mode: 'single' | 'double'): SignupRequest => ({ email, source: '/', mode, networkHash: null, addressHashes: [] });

for (const backend of storeBackends.filter((b) => b.name !== 'pglite')) {
  describe.skipIf(!backend.available)(`Pruning unconfirmed signups on ${backend.name}`, () => {
    let opened: OpenedBackend;
    let outbox: string;

    beforeAll(async () => {
      opened = await backend.open();
      outbox = await mkdtemp(join(tmpdir(), 'lw-prune-'));
    });
    afterAll(async () => {
      await opened?.cleanup();
      await rm(outbox, { recursive: true, force: true });
    });

    it('the daily housekeeping (never a send) removes pending signups older than 30 days and reports the count', async () => {
      const { store, sql } = opened;
      for (const email of ['old1@example.com', 'old2@example.com', 'young@example.com']) await store.signUp(request(email, 'double'));
      await store.signUp(request('member@example.com', 'single'));
      await sql!.query(`update public.email_signups set pending_since = now() - interval '31 days', confirmation_sent_at = now() - interval '31 days' where email like 'old%'`);

      const lines: { fields: Record<string, unknown>; msg: string }[] = [];
      const logger = createLogger({ level: 'info', pretty: false });
      const capture = (fields: unknown, msg?: string) => void lines.push(typeof fields === 'string' ? { fields: {}, msg: fields } : { fields: fields as Record<string, unknown>, msg: msg ?? '' });
      logger.info = capture as typeof logger.info;
      logger.warn = capture as typeof logger.warn;
      logger.error = capture as typeof logger.error;

      const scheduler = startDigestScheduler({
        cron: '0 9 * * 1',
        timezone: 'UTC',
        freshnessDays: 7,
        store,
        mailer: new OutboxMailer({ dir: outbox, from: 'Launched Weekly <digest@launchedweekly.test>' }),
        recaps,
        siteUrl: 'http://localhost:3000',
        unsubscribeSecret: 'prune-test-secret-0123456789abcdef0123456789',
        logger,
        clock: clockReading(() => new Date('2025-07-15T09:00:00Z')),
      });
      try {
        // A send never prunes first (a backlog must not delay the week); the daily housekeeping does.
        await scheduler.runNow();
        expect(lines.map((l) => l.msg).filter((msg) => msg.startsWith('Removed'))).toEqual([]);
        await scheduler.housekeepNow();
      } finally {
        await scheduler.stop();
      }
      expect(lines.map((l) => l.msg)).toContain('Removed 2 unconfirmed signups older than 30 days');
      const left = await sql!.query<{ email: string; status: string }>('select email, status from public.email_signups order by email');
      expect(left.rows).toEqual([
        { email: 'member@example.com', status: 'active' },
        { email: 'young@example.com', status: 'pending' },
      ]);
    });
  });
}

// Pending expires 30 days after the LAST confirmation e-mail, never while a link
// is valid. Time is moved by ageing the rows' timestamps, as 29 and 31 days would.
const SECRET = 'prune-test-secret-0123456789abcdef0123456789';
const DAY_MS = 86_400_000;

for (const backend of sqlBackends) {
  describe.skipIf(!backend.available)(`Pending signups expire after their last confirmation e-mail on ${backend.name}`, () => {
    let opened: OpenedSqlBackend;
    beforeAll(async () => {
      opened = await backend.open();
    });
    afterAll(async () => {
      await opened?.cleanup();
    });

    const age = (days: number, email: string) =>
      opened.sql.query(
        `update public.email_signups set pending_since = pending_since - make_interval(days => $1),
           confirmation_sent_at = confirmation_sent_at - make_interval(days => $1) where email = $2`,
        [days, email],
      );

    it('a re-signup on day 29 keeps the row past day 30, and its fresh link confirms on day 31', async () => {
      const { store } = opened;
      expect((await store.signUp(request('late@example.com', 'double'))).outcome).toBe('send_confirmation');
      expect((await store.signUp(request('gone@example.com', 'double'))).outcome).toBe('send_confirmation');
      await age(29, 'late@example.com');
      await age(31, 'gone@example.com');

      // Day 29: the reader signs up again and gets a fresh 7-day link.
      const again = await store.signUp(request('late@example.com', 'double'));
      expect(again.outcome).toBe('send_confirmation');
      const day29 = new Date();
      const token = createConfirmToken(again.subscriberId, day29, SECRET);

      // Day 31: pending for 31 days, the last confirmation 2 days old.
      await age(2, 'late@example.com');
      expect(await store.prunePending(PENDING_DAYS)).toBe(1);
      expect((await store.findSubscriberByEmail('gone@example.com'))?.status).toBeUndefined();
      expect((await store.findSubscriberByEmail('late@example.com'))?.status).toBe('pending');

      const check = verifyConfirmToken(token, new Date(day29.getTime() + 2 * DAY_MS), SECRET);
      expect(check).toEqual({ ok: true, subscriberId: again.subscriberId });
      expect(await store.activateSubscriber(again.subscriberId, 'confirmation', null)).toEqual({ email: 'late@example.com', status: 'active', activated: true });

      // Without a new e-mail, the same row goes once its last one is older than 30 days.
      expect((await store.signUp(request('quiet@example.com', 'double'))).outcome).toBe('send_confirmation');
      await age(30, 'quiet@example.com');
      expect(await store.prunePending(PENDING_DAYS)).toBe(1);
    });
  });
}
