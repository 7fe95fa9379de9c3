// POST /webhooks/resend against the real app and an embedded database, with events signed the way
// Resend signs them (svix's own Webhook.sign over the raw body) in Resend's documented shapes.
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { addSignup, listActiveSubscribers } from '../support/store-ops.ts';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
const signer = new Webhook(SECRET);

let dataDir: string;
let store: Store;
let storeOpen = false;
let server: TestServer;
let unconfigured: TestServer;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'launched-weekly-webhook-'));
  store = await openPGliteStore(dataDir);
  storeOpen = true;
  [server, unconfigured] = await Promise.all([startTestServer({ store, config: { resendWebhookSecret: SECRET } }), startTestServer()]);
});
afterAll(async () => {
  await Promise.all([server?.close(), unconfigured?.close()]);
  if (storeOpen) await store.close();
  await rm(dataDir, { recursive: true, force: true });
});

function emailEvent(type: string, to: string, extra: Record<string, unknown> = {}) {
  return {
    type,
    created_at: new Date().toISOString(),
    data: {
      created_at: new Date().toISOString(),
      email_id: randomUUID(),
      from: 'Launched Weekly <digest@launchedweekly.com>',
      to: [to],
      subject: 'Launched Weekly: the Top 10 of the week',
      ...extra,
    },
  };
}

function signed(body: string, options: { id?: string; at?: Date } = {}) {
  const id = options.id ?? `msg_${randomBytes(8).toString('hex')}`;
  const at = options.at ?? new Date();
  return {
    'content-type': 'application/json',
    'svix-id': id,
    'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
    'svix-signature': signer.sign(id, at, body),
  };
}

const deliver = (target: TestServer, body: string, headers: Record<string, string>) =>
  fetch(`${target.url}/webhooks/resend`, { method: 'POST', body, headers });

async function subscribe(email: string) {
  expect(await addSignup(server.store, email, '/')).toBe('subscribed');
  return (await server.store.findSubscriberByEmail(email))!;
}

async function activeEmails() {
  return (await listActiveSubscribers(server.store, null, 1000)).map((s) => s.email);
}

describe('accepted events', () => {
  it('a hard bounce ends the subscription: no further digest goes to that address', async () => {
    await subscribe('gone@example.com');
    await subscribe('stays@example.com');
    const body = JSON.stringify(emailEvent('email.bounced', 'gone@example.com', { bounce: { message: 'The recipient’s mail server rejected the address.', subType: 'General', type: 'Permanent' } }));
    const response = await deliver(server, body, signed(body));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'processed', type: 'email.bounced', reason: 'bounced', removed: 1 });
    expect((await server.store.findSubscriberByEmail('gone@example.com'))?.active).toBe(false);
    expect(await activeEmails()).toEqual(['stays@example.com']);
  });

  it('a spam complaint ends the subscription; the recipient may be written "Name <address>" in any case', async () => {
    await subscribe('annoyed@example.com');
    const body = JSON.stringify(emailEvent('email.complained', 'Annoyed Reader <Annoyed@Example.com>'));
    const response = await deliver(server, body, signed(body));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'processed', reason: 'complained', removed: 1 });
    expect((await server.store.findSubscriberByEmail('annoyed@example.com'))?.active).toBe(false);
  });

  it('a soft (transient) or undetermined bounce keeps the subscriber', async () => {
    await subscribe('full-mailbox@example.com');
    for (const type of ['Transient', 'Undetermined']) {
      const body = JSON.stringify(emailEvent('email.bounced', 'full-mailbox@example.com', { bounce: { message: 'Mailbox full', subType: 'MailboxFull', type } }));
      const response = await deliver(server, body, signed(body));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'ignored', type: 'email.bounced' });
    }
    expect((await server.store.findSubscriberByEmail('full-mailbox@example.com'))?.active).toBe(true);
  });

  it('a replayed event (same svix-id, same body) answers 200 and changes nothing', async () => {
    await subscribe('replayed@example.com');
    const body = JSON.stringify(emailEvent('email.bounced', 'replayed@example.com', { bounce: { type: 'Permanent', subType: 'General', message: 'No such user' } }));
    const headers = signed(body, { id: 'msg_replay_1' });
    const first = await deliver(server, body, headers);
    const before = await server.store.countSubscribers();
    const again = await deliver(server, body, headers);
    expect([first.status, again.status]).toEqual([200, 200]);
    expect(await server.store.countSubscribers()).toEqual(before);
    expect((await server.store.findSubscriberByEmail('replayed@example.com'))?.active).toBe(false);
    // A complaint after the bounce makes it the stricter state, complained (checked at the end).
    const complaint = JSON.stringify(emailEvent('email.complained', 'replayed@example.com'));
    expect((await deliver(server, complaint, signed(complaint))).status).toBe(200);
  });

  it('an address that is not on the list: 200, nothing changes', async () => {
    const before = await activeEmails();
    const body = JSON.stringify(emailEvent('email.bounced', 'stranger@example.com', { bounce: { type: 'Permanent' } }));
    const response = await deliver(server, body, signed(body));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'processed', removed: 0 });
    expect(await activeEmails()).toEqual(before);
  });

  it('event types it does not act on are acknowledged and ignored', async () => {
    await subscribe('reader@example.com');
    for (const type of ['email.delivered', 'email.opened', 'contact.created']) {
      const body = JSON.stringify(emailEvent(type, 'reader@example.com'));
      const response = await deliver(server, body, signed(body));
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'ignored', type });
    }
    expect((await server.store.findSubscriberByEmail('reader@example.com'))?.active).toBe(true);
  });
});

describe('refused deliveries', () => {
  it('a tampered body (signed for another address) is refused with 401 and changes nothing', async () => {
    await subscribe('target@example.com');
    const original = JSON.stringify(emailEvent('email.complained', 'someone-else@example.com'));
    const headers = signed(original);
    const tampered = original.replace('someone-else@example.com', 'target@example.com');
    const response = await deliver(server, tampered, headers);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'invalid_signature', message: expect.stringMatching(/signature does not match/) });
    expect((await server.store.findSubscriberByEmail('target@example.com'))?.active).toBe(true);
  });

  it('a signature made with another secret is refused with 401', async () => {
    const body = JSON.stringify(emailEvent('email.complained', 'target@example.com'));
    const id = 'msg_other_secret';
    const at = new Date();
    const forged = new Webhook(`whsec_${randomBytes(24).toString('base64')}`).sign(id, at, body);
    const response = await deliver(server, body, { ...signed(body, { id, at }), 'svix-signature': forged });
    expect(response.status).toBe(401);
    expect((await server.store.findSubscriberByEmail('target@example.com'))?.active).toBe(true);
  });

  it('a correctly signed but stale event (older than 5 minutes) is refused with 401', async () => {
    const body = JSON.stringify(emailEvent('email.complained', 'target@example.com'));
    const response = await deliver(server, body, signed(body, { at: new Date(Date.now() - 6 * 60_000) }));
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ error: 'stale_timestamp', message: expect.stringMatching(/more than 5 minutes/) });
    expect((await server.store.findSubscriberByEmail('target@example.com'))?.active).toBe(true);
  });

  it('missing signature headers: 400 naming them', async () => {
    const body = JSON.stringify(emailEvent('email.complained', 'target@example.com'));
    const response = await deliver(server, body, { 'content-type': 'application/json' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: 'missing_signature', message: 'The svix-id, svix-timestamp and svix-signature headers are required.' });
  });

  it('a signed body that is not a Resend event: 400', async () => {
    const body = JSON.stringify({ hello: 'world' });
    const response = await deliver(server, body, signed(body));
    expect(response.status).toBe(400);
    expect((await response.json()).error).toBe('invalid_event');
  });

  it('a body over 64 kB is refused with 413 before any work', async () => {
    const body = JSON.stringify(emailEvent('email.delivered', 'reader@example.com', { padding: 'x'.repeat(70_000) }));
    const response = await deliver(server, body, signed(body));
    expect(response.status).toBe(413);
  });

  it('without RESEND_WEBHOOK_SECRET the endpoint says it is not configured (503)', async () => {
    const body = JSON.stringify(emailEvent('email.complained', 'target@example.com'));
    const response = await deliver(unconfigured, body, signed(body));
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ error: 'webhooks_not_configured', message: expect.stringMatching(/^Webhooks are not configured/) });
  });
});

describe('what the database records', () => {
  it('the reason of each removal, the stricter one kept', async () => {
    await store.close();
    storeOpen = false;
    const db = new PGlite(join(dataDir, 'db'));
    try {
      const { rows } = await db.query<{ email: string; unsubscribe_reason: string | null }>(
        'select email, unsubscribe_reason from public.email_signups order by email',
      );
      expect(Object.fromEntries(rows.map((row) => [row.email, row.unsubscribe_reason]))).toEqual({
        'annoyed@example.com': 'complained',
        'full-mailbox@example.com': null,
        'gone@example.com': 'bounced',
        'reader@example.com': null,
        'replayed@example.com': 'complained',
        'stays@example.com': null,
        'target@example.com': null,
      });
    } finally {
      await db.close();
    }
  });
});
