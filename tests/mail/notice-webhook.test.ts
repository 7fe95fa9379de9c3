// NOTICE_WEBHOOK_URL: an operator notice is also posted to a chat webhook as {"text": …}, queued in
// the database with the notice and retried by its own worker, never through the mail provider.
// A missed Monday tick is told while the provider refuses all mail and the webhook fails its first
// two posts: the notice reaches the webhook exactly once, under one idempotency key, and no e-mail
// goes out; with OPERATOR_EMAIL set and without. On every store backend; the pauses are shortened
// to about a second.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { catchUpMissedTick, missedNotice } from '../../jobs/digest/catch-up.ts';
import { sendNotice } from '../../jobs/digest/notices.ts';
import { ConfigError, parseConfig } from '../../server/config.ts';
import { createOutboxWorker } from '../../server/mail/outbox-worker.ts';
import { subscriberMail } from '../../server/mail/subscriber-mail.ts';
import { createNoticeWebhookWorker } from '../../server/notices/webhook-worker.ts';
import { startTestServer } from '../support/server.ts';
import { storeBackends } from '../support/store-backends.ts';
import { useStoreAndProvider } from '../support/store-and-provider.ts';

const OPERATOR = 'operator@launched.test';
const quiet = { info: () => {}, warn: () => {} };

interface Post {
  status: number;
  idempotencyKey: string | undefined;
  contentType: string | undefined;
  body: unknown;
}

/** A chat webhook that answers 500 to its first `failures` posts and 200 after, keeping each. */
async function startWebhook(failures: number): Promise<{ url: string; posts: Post[]; close(): Promise<void> }> {
  const posts: Post[] = [];
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  };
  const server: Server = createServer((req, res) => {
    void read(req).then((body) => {
      const status = posts.length < failures ? 500 : 200;
      posts.push({ status, idempotencyKey: req.headers['idempotency-key'] as string | undefined, contentType: req.headers['content-type'], body });
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status === 200 ? 'ok' : 'try later');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/launched`,
    posts,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const backend of storeBackends) {
  // Each on a store of its own: a hold the provider has not ended yet is not told again.
  describe.skipIf(!backend.available).each([
    { operatorEmail: OPERATOR, label: 'set' },
    { operatorEmail: undefined, label: 'unset' },
  ])(`Operator notices posted to NOTICE_WEBHOOK_URL on ${backend.name}, OPERATOR_EMAIL $label`, ({ operatorEmail }) => {
    const rig = useStoreAndProvider(backend);
    const stops: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const stop of stops.splice(0).reverse()) await stop();
    });

    it('posts a missed-tick notice exactly once after two failed posts, while the provider refuses all mail', async () => {
      const webhook = await startWebhook(2);
      stops.push(webhook.close);
      rig.fake.senderRefusal = 'daily_quota_exceeded';
      const outbox = createOutboxWorker({
        store: rig.store,
        mailer: async () => rig.mailer,
        compose: subscriberMail({ siteUrl: 'https://launched.test', secret: 'notice-webhook-secret-0123456789abcdef0123' }),
        log: quiet,
        pollSeconds: 0.2,
        retryFirstSeconds: 1,
        retryMaxSeconds: 2,
        operatorEmail,
        noticeWebhook: true,
      });
      const poster = createNoticeWebhookWorker({ store: rig.store, url: webhook.url, log: quiet, pollSeconds: 0.2, retryFirstSeconds: 1, retryMaxSeconds: 2 });
      outbox.start();
      poster.start();
      stops.push(() => outbox.stop(), () => poster.stop());

      // A server back two days after Monday's 09:00 tick, with DIGEST_CATCHUP_HOURS=6: too late to
      // run, so the operator is told it was missed.
      const week = { ...recaps.at(-1)!, date: '2026-11-23' };
      const missedAt = { cron: '0 9 * * 1', timezone: 'UTC', freshnessDays: 7, catchUpHours: 6, recaps: [week], now: new Date('2026-11-25T12:00:00Z') };
      const decision = await catchUpMissedTick({ ...missedAt, store: rig.store });
      expect(decision.action).toBe('tell-missed');
      if (decision.action !== 'tell-missed') return;
      const notice = missedNotice(missedAt, decision.tick, decision.older);
      await sendNotice(rig.store, { email: operatorEmail, webhook: true }, notice, quiet);
      // Without an operator's address, a reader's confirmation is what the provider refuses.
      if (!operatorEmail) await rig.store.signUp({ email: 'refused.reader@example.com', source: '/', mode: 'double', networkHash: null, addressHashes: [] });

      // Two notices: the missed tick, and the outbox's own that the provider refuses the sender.
      const taken = () => webhook.posts.filter((post) => post.status === 200);
      const textOf = (post: Post) => (post.body as { text: string }).text;
      const started = Date.now();
      while (taken().length < 2 && Date.now() - started < 9_000) await sleep(100);
      // Long enough for a wrongly repeated post to arrive after the ones taken.
      await sleep(1_500);

      expect(webhook.posts.filter((post) => post.status === 500)).toHaveLength(2);
      const missed = taken().filter((post) => textOf(post).startsWith('[Launched Weekly] Missed: the 2026-11-23 09:00 UTC run'));
      expect(missed).toHaveLength(1);
      expect(missed[0]!.contentType).toMatch(/^application\/json/);
      expect(missed[0]!.body).toEqual({ text: `${notice.subject}\n\n${notice.text}` });
      expect(taken().filter((post) => textOf(post).startsWith('[Launched Weekly] E-mail held'))).toHaveLength(1);
      // Each notice is taken once, under one key on every try, so a receiver that keeps keys drops a repeat.
      const keys = new Set(webhook.posts.map((post) => post.idempotencyKey));
      expect(keys.size).toBe(2);
      for (const key of keys) {
        expect(key).toMatch(/^notice\/\d+$/);
        expect(webhook.posts.filter((post) => post.idempotencyKey === key).map((post) => post.status).at(-1)).toBe(200);
        expect(taken().filter((post) => post.idempotencyKey === key)).toHaveLength(1);
      }
      // The provider refused everything: no e-mail went out, the notice's e-mail is held, not failed.
      expect(rig.fake.messages).toEqual([]);
      expect(rig.fake.requests.some((request) => request.kind === 'sender-refused')).toBe(true);
      const outboxNow = await rig.store.outboxSummary(7);
      expect(outboxNow.failed).toBe(0);
      expect(outboxNow.sent).toBe(0);
      // Nothing left to post: a later pass finds nothing.
      expect(await poster.deliverDue()).toBe(0);
      rig.fake.senderRefusal = null;
    }, 60_000);
  });
}

describe('A server with NOTICE_WEBHOOK_URL', () => {
  it('posts a notice recorded by any process to the webhook, and stops its poster with the outbox', async () => {
    const webhook = await startWebhook(0);
    const server = await startTestServer({ config: { noticeWebhookUrl: webhook.url, outbox: { pollSeconds: 0.2, leaseSeconds: 60, retryMaxSeconds: 1 } } });
    try {
      // As `npm run digest` (another process) records a notice: an outbox row for the operator.
      await server.store.enqueueMail('operator', null, { to: OPERATOR, subject: '[Launched Weekly] Weekly digest: sent, 3 messages sent', text: 'The scheduled run finished.' });
      const started = Date.now();
      while (webhook.posts.length === 0 && Date.now() - started < 5_000) await sleep(100);
      expect(webhook.posts.map((post) => post.body)).toEqual([{ text: '[Launched Weekly] Weekly digest: sent, 3 messages sent\n\nThe scheduled run finished.' }]);
    } finally {
      await server.close();
      await webhook.close();
    }
  });
});

describe('NOTICE_WEBHOOK_URL in the environment', () => {
  const parse = (env: Record<string, string>) => parseConfig(env, async () => 'notice-config-secret-0123456789abcdef');
  const url = 'https://hooks.slack.com/services/T000/B000/XXXX';

  it('takes an http(s) URL, with or without OPERATOR_EMAIL, and refuses anything else naming the variable', async () => {
    for (const env of [{ NOTICE_WEBHOOK_URL: url, OPERATOR_EMAIL: OPERATOR }, { NOTICE_WEBHOOK_URL: url }] as Record<string, string>[]) {
      const config = await parse(env);
      expect(config.noticeWebhookUrl).toBe(url);
      expect(config.warnings.filter((line) => line.includes('NOTICE_WEBHOOK_URL'))).toEqual([]);
    }
    const refused = await parse({ NOTICE_WEBHOOK_URL: 'hooks.slack.com/services/T000' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems).toEqual([expect.stringMatching(/^NOTICE_WEBHOOK_URL: must be a https:\/\/ or http:\/\/ URL/)]);
  });
});
