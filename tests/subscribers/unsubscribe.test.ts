// Leaving the list through the real app: the signed token, the GET page that changes nothing, the
// POST (button or RFC 8058 one-click) that unsubscribes, bad links, and the next digest skipping
// whoever left.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { runWeeklyDigest } from '../../server/mail/digest/run.ts';
import { createApp } from '../../server/app.ts';
import { createLogger } from '../../server/http/logger.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import { CLIENT_DIST, loadBuiltRenderer } from '../../server/site/load-renderer.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import type { Store } from '../../server/store/types.ts';
import { createUnsubscribeToken, verifyUnsubscribeToken } from '../../server/subscribers/signed-links.ts';
import { postForm } from '../support/server.ts';
import { addSignup } from '../support/store-ops.ts';

const SECRET = 'unsubscribe-test-secret-0123456789abcdef0123';

interface RunningApp {
  url: string;
  close(): Promise<void>;
}

async function startApp(store: Store, rateLimitPerMinute = 1_000): Promise<RunningApp> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const app = createApp({
    config: { env: 'test', siteUrl: url, trustProxy: 0, rateLimitPerMinute, unsubscribeSecret: SECRET },
    store,
    renderer: await loadBuiltRenderer(),
    logger: createLogger({ level: 'silent', pretty: false }),
    assets: { kind: 'static', dir: CLIENT_DIST },
  });
  server.on('request', app);
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

let store: Store;
let app: RunningApp;
beforeAll(async () => {
  store = await openPGliteStore(null);
  app = await startApp(store);
});
afterAll(async () => {
  await app.close();
  await store.close();
});

async function subscriber(email: string) {
  await addSignup(store, email, '/');
  const record = await store.findSubscriberByEmail(email);
  return { id: record!.id, token: createUnsubscribeToken(record!.id, SECRET) };
}

const oneClick = (token: string) =>
  postForm(`${app.url}/unsubscribe?token=${encodeURIComponent(token)}`, 'List-Unsubscribe=One-Click');
const page = (token: string) => fetch(`${app.url}/unsubscribe?token=${encodeURIComponent(token)}`, { redirect: 'manual' });
const isActive = async (id: string) => (await store.findSubscriber(id))?.active;

describe('unsubscribe tokens', () => {
  it('carry the id (not the address) and verify only with the same secret', () => {
    const token = createUnsubscribeToken('5b0e6c1e-aaaa-4000-8000-000000000001', SECRET);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect(token).not.toContain('@');
    expect(verifyUnsubscribeToken(token, SECRET)).toBe('5b0e6c1e-aaaa-4000-8000-000000000001');
    expect(verifyUnsubscribeToken(token, `${SECRET}x`)).toBeNull();
  });

  it('reject anything malformed, truncated, tampered or forged', () => {
    const token = createUnsubscribeToken('42', SECRET);
    const [id, mac] = token.split('.') as [string, string];
    const flipped = `${id}.${mac.slice(0, 10)}${mac[10] === 'A' ? 'B' : 'A'}${mac.slice(11)}`;
    const otherId = `${Buffer.from('43').toString('base64url')}.${mac}`;
    for (const bad of ['', '.', 'abc', `${id}.`, `.${mac}`, `${id}.${mac}.x`, token.slice(0, -1), token.slice(0, 20), flipped, otherId, `${id}.${mac}=`, `${id}+.${mac}`, 'x'.repeat(600), createUnsubscribeToken('42', 'another-secret-of-enough-length-000000000')]) {
      expect(verifyUnsubscribeToken(bad, SECRET), bad).toBeNull();
    }
    expect(verifyUnsubscribeToken(['a', 'b'], SECRET)).toBeNull();
    expect(verifyUnsubscribeToken(undefined, SECRET)).toBeNull();
  });
});

describe('GET /unsubscribe', () => {
  it('shows a page with a button and changes nothing (mail scanners follow links)', async () => {
    const reader = await subscriber('scanner.target@example.com');
    for (let i = 0; i < 3; i++) {
      const response = await page(reader.token);
      expect(response.status).toBe(200);
      const html = await response.text();
      expect(html).toMatch(/^<!doctype html><html lang="en">/);
      expect(html).toContain('<title>Unsubscribe from Launched Weekly? · Launched Weekly</title>');
      expect(html).toContain('<main>');
      expect(html).toContain(`<form action="/unsubscribe?token=${reader.token}" method="post"><button type="submit">Unsubscribe</button></form>`);
      // Masked as on the subscription page: the link travels with every forwarded digest.
      expect(html).toContain('Press the button to stop the Monday e-mail to s•••@example.com.');
      expect(html).not.toContain('scanner.target');
      expect(html).toContain(`<a href="${app.url}/">← Back to Launched Weekly</a>`);
      expect(html).not.toMatch(/<script/i);
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    }
    expect(await isActive(reader.id)).toBe(true);
  });
});

describe('POST /unsubscribe', () => {
  it('unsubscribes at once on a mail client’s one-click post: 200 with a page, no redirect', async () => {
    const reader = await subscriber('one.click@example.com');
    const response = await oneClick(reader.token);
    expect(response.status).toBe(200);
    expect(response.headers.get('location')).toBeNull();
    const html = await response.text();
    expect(html).toContain('<h1>You are unsubscribed</h1>');
    expect(html).toContain('o•••@example.com will get no more e-mail from Launched Weekly.');
    expect(html).not.toContain('one.click');
    expect(await isActive(reader.id)).toBe(false);
  });

  it('is idempotent: the same post again still answers 200 and the address stays off the list', async () => {
    const reader = await subscriber('twice@example.com');
    expect((await oneClick(reader.token)).status).toBe(200);
    const again = await oneClick(reader.token);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('You are unsubscribed');
    expect(await isActive(reader.id)).toBe(false);
    const later = await page(reader.token);
    expect(await later.text()).toContain('<h1>You are already unsubscribed</h1>');
  });

  it('works from the page’s own button (an empty form post)', async () => {
    const reader = await subscriber('button@example.com');
    const response = await postForm(`${app.url}/unsubscribe?token=${reader.token}`, '');
    expect(response.status).toBe(200);
    expect(await isActive(reader.id)).toBe(false);
  });

  it('offers to subscribe again with the subscription page’s own button, which mails a fresh link and changes nothing itself', async () => {
    const reader = await subscriber('changed.mind@example.com');
    const html = await (await oneClick(reader.token)).text();
    const form = /<form action="([^"]+)" method="post">(.*?)<\/form>/.exec(html.slice(html.indexOf('Changed your mind?') - 200));
    expect(form?.[1]).toBe(`/subscription?token=${reader.token}`);
    expect(form?.[2]).toContain('<input type="hidden" name="action" value="resubscribe"/>');
    expect(html).not.toContain('changed.mind');
    const again = await postForm(`${app.url}${form![1]!}`, 'action=resubscribe');
    expect(again.status).toBe(200);
    expect(again.headers.get('referrer-policy')).toBe('no-referrer');
    expect(await again.text()).toContain('We sent a link to c•••@example.com. Open it within 60 minutes to go on; until then nothing has changed.');
    expect(await isActive(reader.id)).toBe(false);
  });

  it('answers 400 with a clear page for a tampered, truncated or forged token, and changes nothing', async () => {
    const reader = await subscriber('bystander@example.com');
    const [id, mac] = reader.token.split('.') as [string, string];
    const tampered = `${id}.${mac.slice(0, -2)}${mac.endsWith('AA') ? 'BB' : 'AA'}`;
    const forged = createUnsubscribeToken(reader.id, 'someone-else-s-secret-0123456789abcdef');
    for (const token of [tampered, reader.token.slice(0, -5), forged, 'not-a-token', '']) {
      for (const response of [await oneClick(token), await page(token)]) {
        expect(response.status, token).toBe(400);
        const html = await response.text();
        expect(html).toContain('<h1>This unsubscribe link is not valid</h1>');
        expect(html).toContain('mailto:hello@launchedweekly.com');
      }
    }
    const noToken = await fetch(`${app.url}/unsubscribe`, { method: 'POST', redirect: 'manual' });
    expect(noToken.status).toBe(400);
    expect(await isActive(reader.id)).toBe(true);
  });

  it('answers 410 "this link has expired" for a valid link whose subscriber does not exist (deleted or pruned)', async () => {
    const token = createUnsubscribeToken('00000000-0000-4000-8000-000000000000', SECRET);
    for (const response of [await oneClick(token), await page(token)]) {
      expect(response.status).toBe(410);
      expect(await response.text()).toContain('<h1>This link has expired</h1>');
    }
  });

  it('is never limited per network address (one-click posts come from a few provider servers), and leaves the signup limit alone', async () => {
    const limited = await startApp(store, 2);
    try {
      const readers = await Promise.all(['many.a@example.com', 'many.b@example.com', 'many.c@example.com', 'many.d@example.com'].map(subscriber));
      const post = (token: string) => fetch(`${limited.url}/unsubscribe?token=${token}`, { method: 'POST', body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      const statuses = [];
      for (const reader of [...readers, ...readers]) statuses.push((await post(reader.token)).status);
      expect(statuses).toEqual(Array(8).fill(200));
      for (const reader of readers) expect(await isActive(reader.id)).toBe(false);
      const signup = await fetch(`${limited.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'after.the.unsubscribes@example.com' }) });
      expect(signup.status).toBe(201);
    } finally {
      await limited.close();
    }
  });
});

describe('the next digest', () => {
  it('skips a subscriber who unsubscribed', async () => {
    const leaving = await subscriber('leaving.before.monday@example.com');
    await subscriber('staying@example.com');
    expect((await oneClick(leaving.token)).status).toBe(200);

    const outbox = await mkdtemp(join(tmpdir(), 'lw-unsubscribe-outbox-'));
    try {
      const report = await runWeeklyDigest({
        store,
        mailer: new OutboxMailer({ dir: outbox, from: 'Launched Weekly <digest@launchedweekly.test>' }),
        recaps,
        now: new Date('2025-07-15T09:00:00Z'),
        siteUrl: app.url,
        unsubscribeSecret: SECRET,
        mode: 'scheduled',
        freshnessDays: 7,
      });
      const active = (await store.countSubscribers()).active;
      expect(report.outcome).toBe('sent');
      expect(report.recap?.date).toBe('2025-07-14');
      expect(report.sent).toBe(active);
      const recipients = await Promise.all(
        (await readdir(outbox)).map(async (name) => /^To: (.+)$/m.exec(await readFile(join(outbox, name), 'utf8'))?.[1]),
      );
      expect(recipients).toHaveLength(active);
      expect(recipients).toContain('staying@example.com');
      expect(recipients).not.toContain('leaving.before.monday@example.com');
    } finally {
      await rm(outbox, { recursive: true, force: true });
    }
  });
});

describe('rotating UNSUBSCRIBE_SECRET', () => {
  it('accepts links signed with the previous secret, refuses other secrets, and signs new links with the current one', () => {
    const current = 'current-secret-current-secret-current-00';
    const previous = 'previous-secret-previous-secret-previous0';
    const oldLink = createUnsubscribeToken('subscriber-7', previous);
    expect(verifyUnsubscribeToken(oldLink, current)).toBeNull();
    expect(verifyUnsubscribeToken(oldLink, current, [previous])).toBe('subscriber-7');
    expect(verifyUnsubscribeToken(createUnsubscribeToken('subscriber-7', 'someone-else-entirely-someone-else-00000'), current, [previous])).toBeNull();
    expect(verifyUnsubscribeToken(createUnsubscribeToken('subscriber-7', current), current, [previous])).toBe('subscriber-7');
  });
});
