// Issue 43, item 2: mail waits for its sender. The provider refuses the sender itself (a used-up
// daily quota) while confirmations are being promised: every message is held, none failed, tried
// again with growing pauses, and the operator is told once (with a log line); once the provider
// takes mail again, each confirmation arrives exactly once. And a send never outlives its claim.
// On every store backend. The windows are shortened (refusal ~20 s, pauses 1 s doubling to 4 s).
import { describe, expect, it } from 'vitest';
import { createOutboxWorker } from '../server/mail/outbox-worker.ts';
import type { SignupRequest } from '../server/store/types.ts';
import { subscriberMail } from '../server/mail/subscriber-mail.ts';
import { storeBackends } from './support/store-backends.ts';
import { useStoreAndProvider } from './support/store-and-provider.ts';

const SECRET = 'outbox-refused-secret-0123456789abcdef0123456789';
const OPERATOR = 'operator@launched.test';
const compose = subscriberMail({ siteUrl: 'https://launched.test', secret: SECRET });
const double = (email: string): SignupRequest => ({ email, source: '/', mode: 'double', networkHash: null, addressHashes: [] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`Mail that waits for its sender on ${backend.name}`, () => {
    const rig = useStoreAndProvider(backend);

    const confirmations = (email: string) => rig.fake.messages.filter((m) => m.to.includes(email) && m.tags.some((t) => t.name === 'kind' && t.value === 'confirmation'));

    it('holds every message while the quota is used up, tells the operator once, and sends each exactly once after', async () => {
      const warnings: string[] = [];
      const worker = createOutboxWorker({
        store: rig.store,
        mailer: async () => rig.mailer,
        compose,
        log: { info: () => {}, warn: (line) => warnings.push(line) },
        pollSeconds: 0.5,
        retryFirstSeconds: 1,
        retryMaxSeconds: 4,
        operatorEmail: OPERATOR,
      });
      const readers = Array.from({ length: 8 }, (_, i) => `held${i}@example.com`);
      rig.fake.senderRefusal = 'daily_quota_exceeded';
      worker.start();
      try {
        // Confirmations promised all through the refusal, a few seconds apart.
        for (const email of readers) {
          await rig.store.signUp(double(email));
          worker.wake();
          await sleep(2_500);
        }
        const refusedTries = rig.fake.requests.filter((r) => r.kind === 'sender-refused').length;
        expect(refusedTries).toBeGreaterThanOrEqual(3);
        expect(rig.fake.messages).toEqual([]);
        const during = await rig.store.outboxSummary(7);
        expect(during.failed).toBe(0);
        expect(during.sent).toBe(0);
        expect(during.failures[0]?.lastError).toMatch(/^held: the provider refused the sender/);

        rig.fake.senderRefusal = null;
        const done = () => readers.every((email) => confirmations(email).length > 0) && rig.fake.messages.some((m) => m.to.includes(OPERATOR));
        const back = Date.now();
        while (!done() && Date.now() - back < 30_000) await sleep(250);
        expect(readers.map((email) => confirmations(email).length)).toEqual(readers.map(() => 1));
        const told = rig.fake.messages.filter((m) => m.to.includes(OPERATOR));
        expect(told).toHaveLength(1);
        expect(told[0]!.subject).toBe('[Launched Weekly] E-mail held: the provider refused the sender');
        expect(told[0]!.text).toMatch(/refused the sender: daily_quota_exceeded \(HTTP 429\)/);
        expect(warnings.filter((line) => line.startsWith('outbox: The mail provider refused the sender'))).toHaveLength(1);
        const after = await rig.store.outboxSummary(7);
        expect(after).toMatchObject({ failed: 0, queued: 0, retrying: 0 });
        expect(after.sent).toBe(readers.length + 1);
      } finally {
        await worker.stop();
      }
    }, 120_000);

    it('abandons a send that has no answer before its claim runs out, and the message goes out once on a later try', async () => {
      await rig.store.signUp(double('slow@example.com'));
      rig.fake.hang = 1;
      const worker = createOutboxWorker({ store: rig.store, mailer: async () => rig.mailer, compose, log: { info: () => {}, warn: () => {} }, leaseSeconds: 2, retryFirstSeconds: 0.5, retryMaxSeconds: 0.5 });
      try {
        const started = Date.now();
        await worker.deliverDue();
        // Settled (retrying) within the 2 s claim, not after the 15 s request timeout.
        expect(Date.now() - started).toBeLessThan(2_000);
        expect((await rig.store.outboxSummary(7)).failures[0]).toMatchObject({ lastError: expect.stringMatching(/stopped|abort|time/i) });
        await sleep(600);
        await worker.deliverDue();
        expect(confirmations('slow@example.com')).toHaveLength(1);
      } finally {
        await worker.stop();
      }
    }, 60_000);
  });
}
