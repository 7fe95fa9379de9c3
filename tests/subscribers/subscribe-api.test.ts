// POST /api/subscribe against the real app and a real embedded PGlite database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const post = (body: BodyInit, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  fetch(`${server.url}/api/subscribe`, { method: 'POST', body, headers, redirect: 'manual' });
const postJson = (value: unknown) => post(JSON.stringify(value));

async function rowsFor(email: string) {
  const record = await server.store.findSubscriberByEmail(email);
  return record ? [record] : [];
}

describe('POST /api/subscribe (JSON)', () => {
  it('saves a new address trimmed and lower-cased: 201 subscribed', async () => {
    const response = await postJson({ email: '  New.Reader@Example.COM ' });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ status: 'subscribed' });
    expect(await rowsFor('new.reader@example.com')).toHaveLength(1);
  });

  it('answers 409 already_subscribed for the same address in other letter case, and keeps one row', async () => {
    const response = await postJson({ email: 'NEW.reader@example.com' });
    expect(response.status).toBe(409);
    expect(await response.json()).toEqual({ status: 'already_subscribed' });
    expect((await server.store.countSubscribers()).active).toBe(1);
  });

  it.each([
    [{ email: 'not-an-address' }, /exactly one @/],
    [{ email: '' }, /enter your email/],
    [{ email: 'a@b' }, /valid domain/],
    [{ email: ['a@example.com'] }, /as a string/],
    [{ email: { $gt: '' } }, /as a string/],
    [{}, /as a string/],
    [{ email: 'x'.repeat(2000) + '@example.com' }, /at most 254/],
  ])('rejects %j with 400 invalid_email and a message, writing nothing', async (body, message) => {
    const before = await server.store.countSubscribers();
    const response = await postJson(body);
    expect(response.status).toBe(400);
    const reply = (await response.json()) as { error: string; message: string };
    expect(reply.error).toBe('invalid_email');
    expect(reply.message).toMatch(message);
    expect(await server.store.countSubscribers()).toEqual(before);
  });

  it.each(['/api/subscribe/', '/API/Subscribe'])('answers %s as the signup too, once per post', async (path) => {
    const email = `spelling-${path.length}-${path.charCodeAt(1)}@example.com`;
    const first = await fetch(`${server.url}${path}`, { method: 'POST', body: JSON.stringify({ email }), headers: { 'content-type': 'application/json' } });
    expect(first.status).toBe(201);
    expect(await first.json()).toEqual({ status: 'subscribed' });
    const again = await fetch(`${server.url}${path}`, { method: 'POST', body: JSON.stringify({ email }), headers: { 'content-type': 'application/json' } });
    expect(again.status).toBe(409);
    expect(await rowsFor(email)).toHaveLength(1);
  });

  it('refuses an oversized body with 413', async () => {
    const response = await postJson({ email: 'a@example.com', padding: 'x'.repeat(10_000) });
    expect(response.status).toBe(413);
    expect(await response.json()).toEqual({ error: 'payload_too_large', message: 'The request body is too large.' });
  });

  it('refuses invalid JSON with 400 and a wrong content type with 415', async () => {
    const invalid = await post('{"email": ');
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { error: string }).error).toBe('invalid_json');
    const text = await post('a@example.com', { 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expect(((await text.json()) as { message: string }).message).toMatch(/as JSON/);
    const none = await fetch(`${server.url}/api/subscribe`, { method: 'POST' });
    expect(none.status).toBe(415);
  });

  it('refuses a cross-site post with 403', async () => {
    const response = await post(JSON.stringify({ email: 'cross@example.com' }), {
      'content-type': 'application/json',
      origin: 'https://evil.example',
    });
    expect(response.status).toBe(403);
    expect(((await response.json()) as { message: string }).message).toMatch(/only from the Launched Weekly site/);
    expect(await rowsFor('cross@example.com')).toHaveLength(0);
  });

  it('answers 503 "Please try again later." when the store fails, and 404 JSON for unknown API paths', async () => {
    const broken = await startTestServer();
    await broken.store.close();
    try {
      const response = await fetch(`${broken.url}/api/subscribe`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'late@example.com' }),
      });
      expect(response.status).toBe(503);
      expect(await response.json()).toEqual({ error: 'unavailable', message: 'Please try again later.' });
      expect((await fetch(`${broken.url}/readyz`)).status).toBe(503);
      expect((await fetch(`${broken.url}/weekly-recap-july-14`)).status).toBe(200);
    } finally {
      await broken.close().catch(() => {});
    }
    const unknown = await fetch(`${server.url}/api/nothing`);
    expect(unknown.status).toBe(404);
  });
});

describe('POST /api/subscribe (HTML form, no JavaScript)', () => {
  const form = (fields: Record<string, string>) =>
    post(new URLSearchParams(fields).toString(), { 'content-type': 'application/x-www-form-urlencoded' });

  it('saves and sends the reader back to the page and form they came from', async () => {
    const response = await form({ email: 'Form.Reader@example.com', source: '/weekly-recap-june-9' });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/weekly-recap-june-9?signup=subscribed#email-signup');
    expect(await rowsFor('form.reader@example.com')).toHaveLength(1);
  });

  it('reports a duplicate and an invalid address the same way', async () => {
    expect((await form({ email: 'form.reader@example.com', source: '/about' })).headers.get('location')).toBe('/about?signup=already-subscribed#email-signup');
    expect((await form({ email: 'nope', source: '/archive' })).headers.get('location')).toBe('/archive?signup=invalid-email#email-signup');
  });

  it('never redirects off the site, whatever the source field says', async () => {
    const response = await form({ email: 'safe@example.com', source: 'https://evil.example/' });
    expect(response.headers.get('location')).toBe('/?signup=subscribed#email-signup');
    const protocolRelative = await form({ email: 'safe2@example.com', source: '//evil.example' });
    expect(protocolRelative.headers.get('location')).toBe('/?signup=subscribed#email-signup');
  });

  it('the page it lands on shows the outcome as text next to the form', async () => {
    const html = (await (await fetch(`${server.url}/about?signup=already-subscribed`)).text()).replaceAll('<!-- -->', '');
    expect(html).toMatch(/<p role="status"[^>]*><strong>Already subscribed!<\/strong> This email is already on our list\.<\/p>/);
    const ignored = await (await fetch(`${server.url}/about?signup=<script>alert(1)</script>`)).text();
    expect(ignored).not.toContain('<script>alert(1)</script>');
    expect(ignored).not.toContain('role="status"');
  });
});

describe('rate limit', () => {
  it('answers 429 with a message once a client exceeds the limit per minute', async () => {
    const limited = await startTestServer({ config: { rateLimitPerMinute: 3 } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`${limited.url}/api/subscribe`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: `burst${i}@example.com` }),
        });
        statuses.push(response.status);
        if (response.status === 429) expect(((await response.json()) as { message: string }).message).toMatch(/wait a minute/);
      }
      expect(statuses).toEqual([201, 201, 201, 429, 429]);
    } finally {
      await limited.close();
    }
  });
});
