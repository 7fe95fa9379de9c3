// Every page whose address carries a token answers `Referrer-Policy: no-referrer`,
// whatever it answers (the page, a refusal of a bad or expired token, a body it cannot read), so
// the token never travels in a Referer header, not even to our own origin's logs. Each route, GET
// and POST, against the real app on an embedded database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { createFreshLinkToken, newFreshLink } from '../../server/subscribers/link-tokens.ts';
import { createPreviewToken } from '../../server/site/preview-token.ts';
import { createConfirmToken, createUnsubscribeToken } from '../../server/subscribers/signed-links.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';

let server: TestServer;
let id: string;
let pendingId: string;
/** The reader's link version once confirmed, which a fresh link made now names. */
let version: number;
beforeAll(async () => {
  server = await startTestServer({ config: { signupConfirmation: 'double' } });
  for (const email of ['reader@example.com', 'waiting@example.com']) {
    await fetch(`${server.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });
  }
  id = (await server.store.findSubscriberByEmail('reader@example.com'))!.id;
  pendingId = (await server.store.findSubscriberByEmail('waiting@example.com'))!.id;
  await server.store.activateSubscriber(id, 'confirmation', null);
  version = (await server.store.linkTarget(id))!.linkVersion;
});
afterAll(async () => {
  await server?.close();
});

const form = { 'content-type': 'application/x-www-form-urlencoded' };

function requests(): { name: string; path: string; init?: RequestInit; status: number }[] {
  const token = encodeURIComponent(createUnsubscribeToken(id, TEST_UNSUBSCRIBE_SECRET));
  const now = new Date();
  const confirm = encodeURIComponent(createConfirmToken(pendingId, now, TEST_UNSUBSCRIBE_SECRET, 1));
  const expiredConfirm = encodeURIComponent(createConfirmToken(pendingId, new Date(now.getTime() - 8 * 86_400_000), TEST_UNSUBSCRIBE_SECRET, 1));
  const fresh = encodeURIComponent(createFreshLinkToken({ purpose: 'download', subscriberId: id, version, ...newFreshLink(now) }, TEST_UNSUBSCRIBE_SECRET));
  const week = recaps[0]!;
  const preview = encodeURIComponent(createPreviewToken(week.date, now, TEST_UNSUBSCRIBE_SECRET));
  return [
    { name: 'unsubscribe page', path: `/unsubscribe?token=${token}`, status: 200 },
    { name: 'unsubscribe page, bad token', path: '/unsubscribe?token=nope', status: 400 },
    { name: 'unsubscribe page, body too large', path: `/unsubscribe?token=${token}`, init: { method: 'POST', headers: form, body: `x=${'a'.repeat(4096)}` }, status: 413 },
    { name: 'confirm page', path: `/confirm?token=${confirm}`, status: 200 },
    { name: 'confirm page, expired link', path: `/confirm?token=${expiredConfirm}`, status: 410 },
    { name: 'confirm page, bad token', path: '/confirm?token=nope', init: { method: 'POST', headers: form, body: '' }, status: 400 },
    { name: 'subscription page', path: `/subscription?token=${token}`, status: 200 },
    { name: 'subscription page, bad action', path: `/subscription?token=${token}`, init: { method: 'POST', headers: form, body: 'action=nothing' }, status: 400 },
    { name: 'subscription page, bad token', path: '/subscription?token=nope', status: 400 },
    { name: 'fresh-link page', path: `/subscription/link?token=${fresh}`, status: 200 },
    { name: 'fresh-link page, bad token', path: '/subscription/link?token=nope', init: { method: 'POST', headers: form, body: '' }, status: 400 },
    { name: 'preview of a week', path: `${week.path}?preview=${preview}`, status: 200 },
    { name: 'preview of a week, bad token', path: `${week.path}?preview=nope`, status: 403 },
    { name: 'preview link opened on another page', path: `/about?preview=${preview}`, status: 200 },
    { name: 'preview of the e-mail', path: `/preview/email?preview=${preview}`, status: 200 },
    { name: 'preview of the e-mail, text part', path: `/preview/email?preview=${preview}&part=text`, status: 200 },
  ];
}

describe('Referrer-Policy on every page reached with a token', () => {
  it('is no-referrer on each route, for the page and for every refusal', async () => {
    const answers = [];
    for (const request of requests()) {
      const response = await fetch(`${server.url}${request.path}`, { redirect: 'manual', ...request.init });
      await response.arrayBuffer();
      answers.push({ name: request.name, status: response.status, policy: response.headers.get('referrer-policy') });
    }
    expect(answers).toEqual(requests().map((request) => ({ name: request.name, status: request.status, policy: 'no-referrer' })));
  });

  it('and the posts that act: unsubscribe, confirm, subscription buttons, a fresh link used', async () => {
    const token = encodeURIComponent(createUnsubscribeToken(id, TEST_UNSUBSCRIBE_SECRET));
    const fresh = encodeURIComponent(createFreshLinkToken({ purpose: 'download', subscriberId: id, version, ...newFreshLink(new Date()) }, TEST_UNSUBSCRIBE_SECRET));
    const confirm = encodeURIComponent(createConfirmToken(pendingId, new Date(), TEST_UNSUBSCRIBE_SECRET, 1));
    const posts = [
      { path: `/subscription/link?token=${fresh}`, body: '', status: 200 },
      { path: `/subscription?token=${token}`, body: 'action=unsubscribe', status: 200 },
      { path: `/unsubscribe?token=${token}`, body: 'List-Unsubscribe=One-Click', status: 200 },
      { path: `/confirm?token=${confirm}`, body: '', status: 200 },
    ];
    const answers = [];
    for (const post of posts) {
      const response = await fetch(`${server.url}${post.path}`, { method: 'POST', headers: form, body: post.body, redirect: 'manual' });
      await response.arrayBuffer();
      answers.push({ path: post.path, status: response.status, policy: response.headers.get('referrer-policy') });
    }
    expect(answers).toEqual(posts.map((post) => ({ path: post.path, status: post.status, policy: 'no-referrer' })));
    // They acted: the reader left and the waiting address is confirmed.
    expect((await server.store.findSubscriber(id))?.status).toBe('unsubscribed');
    expect((await server.store.findSubscriber(pendingId))?.status).toBe('active');
  });
});
