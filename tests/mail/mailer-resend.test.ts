// The Resend mailer, through the real `resend` SDK, against a local server that answers as Resend
// documents: batching, idempotency, headers, rate limits, outages, a hung connection, refusals.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ResendMailer } from '../../server/mail/resend.ts';
import type { OutgoingMessage } from '../../server/mail/types.ts';
import { startFakeResend, type FakeResend } from '../support/fake-resend.ts';

let fake: FakeResend;
beforeEach(async () => {
  fake = await startFakeResend();
});
afterEach(() => fake.close());

const FAST = { baseDelayMs: 10, maxDelayMs: 50, requestTimeoutMs: 2_000 };
const mailerFor = (policy: Partial<typeof FAST> & { maxAttempts?: number } = {}, apiKey = 're_test_key') =>
  new ResendMailer({ apiKey, baseUrl: fake.url, from: 'Launched Weekly <digest@launchedweekly.test>', policy: { ...FAST, ...policy } });

function message(n: number, to = `reader${n}@example.com`): OutgoingMessage {
  const url = `https://launchedweekly.test/unsubscribe?token=t${n}`;
  return {
    to,
    from: 'Launched Weekly <digest@launchedweekly.test>',
    subject: 'Week of July 14, 2025: Data & Automation Tools Lead the Innovation Wave',
    html: `<p>Top 10 for reader ${n}</p><a href="${url}">Unsubscribe</a>`,
    text: `Top 10 for reader ${n}\nUnsubscribe ${url}`,
    headers: { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    tags: { recap: '2025-07-14', kind: 'digest' },
  };
}
const messages = (count: number) => Array.from({ length: count }, (_, i) => message(i + 1));
const batchCalls = () => fake.requests.filter((r) => r.path === '/emails/batch');

describe('ResendMailer with the real SDK', () => {
  batchingAndIdempotency();
  retriesAndTimeouts();
  refusalsAndPacing();
});

/** How messages are split into calls, what each carries, and what a repeated key does. */
function batchingAndIdempotency() {
  it('splits 250 messages into 3 calls of at most 100, each with its own idempotency key, and sends each once', async () => {
    const outcome = await mailerFor().sendBatch(messages(250), { idempotencyKey: 'digest-k1' });
    expect(batchCalls().map((r) => r.idempotencyKey)).toEqual(['digest-k1/1', 'digest-k1/2', 'digest-k1/3']);
    expect(fake.messages).toHaveLength(250);
    expect(outcome.results.every((r) => r.status === 'accepted')).toBe(true);
    // Provider ids line up with the messages they belong to.
    const ids = new Map(fake.messages.map((m) => [m.to[0], m.id]));
    outcome.results.forEach((result, i) => {
      expect(result).toEqual({ status: 'accepted', providerId: ids.get(`reader${i + 1}@example.com`) });
    });
  });

  it('puts List-Unsubscribe and List-Unsubscribe-Post on every message', async () => {
    await mailerFor().sendBatch(messages(120), { idempotencyKey: 'digest-headers' });
    expect(fake.messages).toHaveLength(120);
    for (const sent of fake.messages) {
      expect(sent.headers['List-Unsubscribe']).toMatch(/^<https:\/\/launchedweekly\.test\/unsubscribe\?token=t\d+>$/);
      expect(sent.headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
      expect(sent.tags).toContainEqual({ name: 'recap', value: '2025-07-14' });
    }
  });

  it('sends nothing twice when the same batch is sent again with the same key, and gets the same ids back', async () => {
    const mailer = mailerFor();
    const first = await mailer.sendBatch(messages(5), { idempotencyKey: 'digest-same' });
    const again = await mailer.sendBatch(messages(5), { idempotencyKey: 'digest-same' });
    expect(fake.messages).toHaveLength(5);
    expect(again).toEqual(first);
    expect(fake.requests.at(-1)?.kind).toBe('replayed');
  });

  it('fails a reused key with a different payload (409) as permanent, without retrying', async () => {
    const mailer = mailerFor();
    await mailer.sendBatch(messages(2), { idempotencyKey: 'digest-reused' });
    const outcome = await mailer.sendBatch([message(99)], { idempotencyKey: 'digest-reused' });
    expect(outcome.results).toEqual([{ status: 'failed', reason: expect.stringMatching(/invalid_idempotent_request \(HTTP 409\)/), permanent: true, uncertain: false }]);
    expect(batchCalls()).toHaveLength(2);
    expect(fake.deliveredTo('reader99@example.com')).toHaveLength(0);
  });
}

/** A provider that is busy, down or hangs: the mailer waits, retries under the same key, or gives up. */
function retriesAndTimeouts() {
  it('waits as long as retry-after says on 429, then sends', async () => {
    fake.rateLimitStorm = 2;
    fake.stormRetryAfterSeconds = 1;
    const started = Date.now();
    const outcome = await mailerFor().sendBatch(messages(3), { idempotencyKey: 'digest-429' });
    const elapsed = Date.now() - started;
    expect(outcome.results.map((r) => r.status)).toEqual(['accepted', 'accepted', 'accepted']);
    expect(batchCalls().map((r) => r.kind)).toEqual(['storm', 'storm', 'accepted']);
    // Two waits of one second each: the SDK's answer headers were read, not a guess.
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    const gaps = batchCalls().slice(1).map((r, i) => r.at - batchCalls()[i]!.at);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(950);
    expect(fake.messages).toHaveLength(3);
  });

  it('retries 500s with back-off and then succeeds, sending once', async () => {
    fake.serverErrors = 3;
    const outcome = await mailerFor().sendBatch(messages(4), { idempotencyKey: 'digest-500' });
    expect(outcome.results.every((r) => r.status === 'accepted')).toBe(true);
    expect(batchCalls().map((r) => r.kind)).toEqual(['server-error', 'server-error', 'server-error', 'accepted']);
    expect(fake.messages).toHaveLength(4);
  });

  it('gives up after the attempt budget when the provider stays down: failed, retryable, nothing sent', async () => {
    fake.serverErrors = 100;
    const outcome = await mailerFor({ maxAttempts: 4 }).sendBatch(messages(2), { idempotencyKey: 'digest-down' });
    expect(batchCalls()).toHaveLength(4);
    expect(outcome.results).toEqual([
      // A 500 may come after the provider took the request: whether it went out is not known.
      { status: 'failed', reason: expect.stringMatching(/internal_server_error \(HTTP 500\).*gave up after 4 tries/), permanent: false, uncertain: true },
      { status: 'failed', reason: expect.stringMatching(/gave up after 4 tries/), permanent: false, uncertain: true },
    ]);
    expect(fake.messages).toHaveLength(0);
  });

  it('abandons a hung request after the timeout and retries with the same key: the provider sends once', async () => {
    fake.hang = 1;
    fake.hangAfterAccept = true;
    const started = Date.now();
    const outcome = await mailerFor({ requestTimeoutMs: 400 }).sendBatch(messages(3), { idempotencyKey: 'digest-hung' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(380);
    expect(outcome.results.every((r) => r.status === 'accepted')).toBe(true);
    expect(batchCalls().map((r) => r.kind)).toEqual(['accepted-then-hung', 'replayed']);
    expect(fake.messages).toHaveLength(3);
    // The ids reported are the ones the provider recorded the first time.
    expect(outcome.results.map((r) => (r.status === 'accepted' ? r.providerId : null))).toEqual(fake.messages.map((m) => m.id));
  });

  it('also survives a request that hangs before the provider took it', async () => {
    fake.hang = 1;
    fake.hangAfterAccept = false;
    const outcome = await mailerFor({ requestTimeoutMs: 300 }).sendBatch(messages(2), { idempotencyKey: 'digest-hung-early' });
    expect(outcome.results.every((r) => r.status === 'accepted')).toBe(true);
    expect(fake.messages).toHaveLength(2);
  });
}

/** Refusals that no retry can fix, the pace the provider asks for, and the single-message call. */
function refusalsAndPacing() {
  it('records a refused address (validation_error) as a permanent failure and sends the rest of the batch', async () => {
    fake.refusedAddresses.add('reader2@example.com');
    const outcome = await mailerFor().sendBatch(messages(3), { idempotencyKey: 'digest-422' });
    expect(outcome.results[0]).toEqual({ status: 'accepted', providerId: fake.deliveredTo('reader1@example.com')[0]!.id });
    expect(outcome.results[1]).toEqual({ status: 'failed', reason: expect.stringMatching(/^validation_error: Invalid `to` field/), permanent: true });
    expect(outcome.results[2]).toEqual({ status: 'accepted', providerId: fake.deliveredTo('reader3@example.com')[0]!.id });
    expect(fake.deliveredTo('reader2@example.com')).toHaveLength(0);
    expect(batchCalls()).toHaveLength(1);
  });

  it('fails a whole request the provider refuses with 422 without retrying it', async () => {
    const bad = { ...message(1), from: 'not a sender' };
    const outcome = await mailerFor().sendBatch([bad], { idempotencyKey: 'digest-422-all' });
    expect(outcome.results).toEqual([{ status: 'failed', reason: expect.stringMatching(/validation_error/), permanent: true }]);
    expect(fake.messages).toHaveLength(0);
    expect(batchCalls()).toHaveLength(1);
  });

  it('stops at once on an invalid API key and says so (fatal)', async () => {
    const outcome = await mailerFor({}, 'not-a-resend-key').sendBatch(messages(150), { idempotencyKey: 'digest-auth' });
    expect(outcome.fatal).toMatch(/invalid_api_key \(HTTP 403\)/);
    expect(outcome.results).toHaveLength(150);
    expect(outcome.results.every((r) => r.status === 'failed' && r.permanent)).toBe(true);
    expect(batchCalls()).toHaveLength(1);
  });

  it('paces itself to the limit the provider advertises, so the enforced limit never answers 429', async () => {
    fake.requestsPerSecond = 4;
    const mailer = mailerFor();
    const started = Date.now();
    for (let i = 0; i < 10; i++) {
      const outcome = await mailer.sendBatch([message(i)], { idempotencyKey: `digest-pace-${i}` });
      expect(outcome.results[0]!.status).toBe('accepted');
    }
    expect(fake.enforcedRateLimits()).toBe(0);
    expect(fake.messages).toHaveLength(10);
    expect(mailer.advertisedLimit()).toBe(4);
    // 10 calls at 4 per second need at least two window resets.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
  });

  it('sends a single message (a test to self) through POST /emails', async () => {
    const outcome = await mailerFor().send(message(7, 'operator@example.com'));
    expect(outcome).toEqual({ status: 'accepted', providerId: fake.deliveredTo('operator@example.com')[0]!.id });
    expect(fake.requests.map((r) => r.path)).toEqual(['/emails']);
  });
}
