// A 409 on a retry of an outbox message is settled as the digest settles a batch
// it cannot settle. The first try is accepted but its answer never comes back (the send is
// abandoned at its deadline); the wording of the e-mail changes before the retry (a deploy in
// between), so the provider answers the retry under the same key with 409
// invalid_idempotent_request. The message very likely went out: it is `unknown`, neither failed
// nor counted sent, never tried again, with a warning in the log, and it shows as unknown in the
// outbox section of `npm run digest -- --history` and in the report's outbox counts. On every store backend.
import { describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { outboxLines } from '../../server/mail/digest/run-report.ts';
import { gatherReport } from '../../jobs/report/gather.ts';
import { headlineFigures } from '../../jobs/report/render.tsx';
import { createOutboxWorker } from '../../server/mail/outbox-worker.ts';
import type { ComposeMail } from '../../server/mail/subscriber-mail.ts';
import { subscriberMail } from '../../server/mail/subscriber-mail.ts';
import { storeBackends } from '../support/store-backends.ts';
import { useStoreAndProvider } from '../support/store-and-provider.ts';

const SECRET = 'outbox-unknown-secret-0123456789abcdef0123456789';
const READER = 'conflict@example.com';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The site's own e-mails, whose subject changes after the first try, as a deploy between two tries would change it. */
function composeChangingAfterFirstTry(): ComposeMail {
  const compose = subscriberMail({ siteUrl: 'https://launched.test', secret: SECRET });
  let tries = 0;
  return async (row, from) => {
    const composed = await compose(row, from);
    tries++;
    if (composed.kind !== 'send' || tries === 1) return composed;
    return { ...composed, message: { ...composed.message, subject: `${composed.message.subject} (reworded)` } };
  };
}

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`A 409 on an outbox retry on ${backend.name}`, () => {
    const rig = useStoreAndProvider(backend);

    it('settles the message as unknown: not failed, not sent twice, not retried, and shown as unknown in the history and the report', async () => {
      const warnings: string[] = [];
      const worker = createOutboxWorker({
        store: rig.store,
        mailer: async () => rig.mailer,
        compose: composeChangingAfterFirstTry(),
        log: { info: () => {}, warn: (line) => warnings.push(line) },
        leaseSeconds: 2,
        retryFirstSeconds: 1,
        retryMaxSeconds: 1,
      });
      expect((await rig.store.signUp({ email: READER, source: '/', mode: 'double', networkHash: null, addressHashes: [] })).outcome).toBe('send_confirmation');

      // Try 1: accepted, but the answer never arrives; the send is abandoned at its deadline.
      rig.fake.hang = 1;
      await worker.deliverDue();
      expect(rig.fake.requests.map((r) => r.kind)).toEqual(['accepted-then-hung']);
      const afterFirst = await rig.store.outboxSummary(7);
      expect(afterFirst).toMatchObject({ retrying: 1, sent: 0, failed: 0, unknown: 0 });

      // Try 2, once its pause is over: other content under the same key.
      await sleep(1_200);
      await worker.deliverDue();
      expect(rig.fake.requests.at(-1)).toMatchObject({ status: 409, kind: 'idempotency-conflict', idempotencyKey: expect.stringMatching(/^outbox\/[0-9a-f-]{36}\/1$/) });
      const summary = await rig.store.outboxSummary(7);
      expect(summary).toMatchObject({ queued: 0, retrying: 0, failed: 0, sent: 0, unknown: 1 });
      expect(summary.failures).toHaveLength(1);
      expect(summary.failures[0]).toMatchObject({ kind: 'confirm', state: 'unknown', attempts: 2, lastError: expect.stringMatching(/^very likely sent: .*invalid_idempotent_request/) });
      expect(warnings.filter((line) => /^outbox: confirm #\d+ unknown: very likely sent/.test(line))).toHaveLength(1);

      // Never tried again, so never a second copy; and the reader's throttle is kept, as for a sent one.
      await sleep(1_200);
      const requests = rig.fake.requests.length;
      expect(await worker.deliverDue()).toBe(0);
      expect(rig.fake.requests).toHaveLength(requests);
      expect(rig.fake.messages.filter((m) => m.to.includes(READER))).toHaveLength(1);
      expect((await rig.store.signUp({ email: READER, source: '/', mode: 'double', networkHash: null, addressHashes: [] })).outcome).toBe('nothing_to_send');

      // What `npm run digest -- --history` prints for the outbox, and the report's figures.
      const history = outboxLines(await rig.store.outboxSummary(7));
      expect(history[0]).toMatch(/^Mail outbox \(confirmations, welcomes, notices\), last 7 days: 0 queued · 0 retrying · 0 failed · 0 sent · 1 unknown \(very likely sent, not retried\)$/);
      expect(history[1]).toMatch(/^ {2}#\d+ confirm unknown, queued .*, 2 tries: very likely sent: /);
      const data = await gatherReport({ store: rig.store, recaps, now: new Date(), siteUrl: 'https://launched.test', production: false, digest: { cron: '0 9 * * 1', timezone: 'UTC', freshnessDays: 7 } });
      expect(headlineFigures(data)).toContain('Mail outbox, last 7 days: 0 queued · 0 retrying · 0 failed · 0 sent · 1 unknown (very likely sent, not retried)');
      await worker.stop();
    }, 30_000);
  });
}
