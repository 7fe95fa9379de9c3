// Security headers on pages and the API, the CSP holding in a real browser (pages still hydrate,
// nothing is blocked), the per-address rate limit behind a trusted proxy, and cross-site signups
// refused.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RATE_LIMITED_MESSAGE } from '../../shared/signup-outcome.ts';
import { chromiumAvailable, launchChromium } from '../support/browser.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

if (!chromiumAvailable) console.warn('[security-headers] No Chromium at /usr/bin/chromium: the in-browser CSP test is skipped.');

let server: TestServer;
let production: TestServer;
beforeAll(async () => {
  [server, production] = await Promise.all([startTestServer(), startTestServer({ config: { env: 'production' } })]);
});
afterAll(async () => {
  await Promise.all([server?.close(), production?.close()]);
});

const signup = (target: TestServer, email: string, headers: Record<string, string> = {}) =>
  fetch(`${target.url}/api/subscribe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ email }),
  });

function cspDirectives(header: string | null): Map<string, string> {
  expect(header).toBeTruthy();
  return new Map(
    header!
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0])
      .map(([name, ...values]) => [name!, values.join(' ')]),
  );
}

describe('headers on every kind of answer', () => {
  const requests: [string, (target: TestServer) => Promise<Response>][] = [
    ['home page', (t) => fetch(`${t.url}/`)],
    ['recap page', (t) => fetch(`${t.url}/weekly-recap-july-14`)],
    ['404 page', (t) => fetch(`${t.url}/no-such-page`)],
    ['API answer', (t) => signup(t, 'headers@example.com')],
    ['API answer for an address already on the list', async (t) => {
      await signup(t, 'headers-twice@example.com');
      return signup(t, 'headers-twice@example.com');
    }],
    ['API error', (t) => fetch(`${t.url}/api/nothing-here`)],
    ['API error for a body that is not JSON', (t) => fetch(`${t.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email": ' })],
    ['form post sent back to its page', (t) =>
      fetch(`${t.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'email=form-headers%40example.com&source=%2F', redirect: 'manual' })],
    ['static file', (t) => fetch(`${t.url}/favicon.svg`)],
    ['health check', (t) => fetch(`${t.url}/healthz`)],
  ];

  it.each(requests)('%s', async (_name, request) => {
    const response = await request(server);
    const headers = response.headers;
    const csp = cspDirectives(headers.get('content-security-policy'));
    expect(csp.get('default-src')).toBe("'self'");
    // Only the site's own script files: no inline script, no eval, no other origin.
    expect(csp.get('script-src')).toBe("'self'");
    expect(csp.get('object-src')).toBe("'none'");
    expect(csp.get('base-uri')).toBe("'self'");
    expect(csp.get('form-action')).toBe("'self'");
    expect(csp.get('frame-ancestors')).toBe("'none'");
    expect(headers.get('x-frame-options')).toBe('DENY');
    expect(headers.get('x-content-type-options')).toBe('nosniff');
    expect(headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
    expect(headers.get('x-powered-by')).toBeNull();
    // HSTS only where the site is served over TLS: production.
    expect(headers.get('strict-transport-security')).toBeNull();
  });

  it.each(requests)('%s in production also carries HSTS for a year', async (_name, request) => {
    const response = await request(production);
    expect(response.headers.get('strict-transport-security')).toBe('max-age=31536000; includeSubDomains');
    expect(cspDirectives(response.headers.get('content-security-policy')).get('script-src')).toBe("'self'");
  });

  it('the only inline <script> elements are inert data blocks (JSON), so the CSP needs no nonce', async () => {
    for (const path of ['/', '/archive', '/about', '/weekly-recap-july-14', '/weekly-recap-february-2']) {
      const html = await (await fetch(`${server.url}${path}`)).text();
      const scripts = [...html.matchAll(/<script\b([^>]*)>/g)].map((match) => match[1]!);
      expect(scripts.length).toBeGreaterThan(0);
      for (const attributes of scripts) {
        const type = /\btype="([^"]*)"/.exec(attributes)?.[1];
        const external = /\bsrc="\/[^"]*"/.test(attributes);
        // Either a same-origin file or a data block browsers never execute.
        expect(external || type === 'application/json' || type === 'application/ld+json', `${path}: <script${attributes}>`).toBe(true);
      }
    }
  });
});

describe.skipIf(!chromiumAvailable)('the CSP in Chromium', () => {
  let browser: Browser;
  let limited: TestServer;
  beforeAll(async () => {
    [browser, limited] = await Promise.all([launchChromium(), startTestServer({ config: { rateLimitPerMinute: 1 } })]);
  });
  afterAll(async () => {
    await browser?.close();
    await limited?.close();
  });

  async function open(base: string, path: string, problems: string[]): Promise<Page> {
    const page = await browser.newPage();
    // Runs before any page script and outside the CSP: every violation the page causes lands here.
    await page.addInitScript(() => {
      const seen: string[] = [];
      (window as unknown as { cspViolations: string[] }).cspViolations = seen;
      document.addEventListener('securitypolicyviolation', (event) => seen.push(`${event.violatedDirective} ${event.blockedURI}`));
    });
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(`${path}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`${path}: ${error.message}`));
    await page.goto(base + path, { waitUntil: 'networkidle' });
    return page;
  }

  const violations = (page: Page) => page.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations);

  it('pages hydrate under the policy with no violation and no console error', async () => {
    const problems: string[] = [];
    for (const path of ['/', '/archive', '/about', '/weekly-recap-july-14', '/weekly-recap-february-9']) {
      const page = await open(server.url, path, problems);
      await page.waitForSelector('#email-signup form[novalidate]', { timeout: 15_000 });
      expect(await violations(page), path).toEqual([]);
      await page.close();
    }
    expect(problems).toEqual([]);
  }, 60_000);

  it('the signup toasts work under the policy, including the rate-limit message', async () => {
    const problems: string[] = [];
    const page = await open(limited.url, '/', problems);
    await page.waitForSelector('#email-signup form[novalidate]');
    const form = page.locator('#email-signup');
    await form.getByPlaceholder('Enter your email').fill('first@example.com');
    await form.getByRole('button', { name: 'Subscribe' }).click();
    await page.locator('[data-sonner-toast]', { hasText: "You're In!" }).waitFor();
    await form.getByPlaceholder('Enter your email').fill('second@example.com');
    await form.getByRole('button', { name: 'Subscribe' }).click();
    await page.locator('[data-sonner-toast]', { hasText: RATE_LIMITED_MESSAGE }).waitFor();
    expect(await violations(page)).toEqual([]);
    // The 429 itself is reported by the browser as a failed resource; nothing else may be.
    expect(problems.filter((p) => !/Failed to load resource: .* 429/.test(p))).toEqual([]);
    await page.close();
  }, 30_000);
});

describe('rate limit per client address', () => {
  // Started once, in a hook: opening a fresh embedded database can take half a test's time limit
  // on a busy machine.
  let proxied: TestServer;
  let direct: TestServer;
  beforeAll(async () => {
    [proxied, direct] = await Promise.all([
      startTestServer({ config: { trustProxy: 1, rateLimitPerMinute: 2 } }),
      startTestServer({ config: { trustProxy: 0, rateLimitPerMinute: 2 } }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([proxied?.close(), direct?.close()]);
  });

  it('behind one trusted proxy (TRUST_PROXY=1), each X-Forwarded-For address has its own count', async () => {
    const from = (address: string) => ({ 'x-forwarded-for': address });
    const statuses = async (address: string, count: number, prefix: string) => {
      const result: number[] = [];
      for (let i = 0; i < count; i++) result.push((await signup(proxied, `${prefix}${i}@example.com`, from(address))).status);
      return result;
    };
    expect(await statuses('203.0.113.10', 3, 'a')).toEqual([201, 201, 429]);
    expect(await statuses('203.0.113.11', 2, 'b')).toEqual([201, 201]);
    // A client cannot reset its count by prepending an address: only the proxy's entry counts.
    expect((await signup(proxied, 'c0@example.com', from('198.51.100.7, 203.0.113.10'))).status).toBe(429);

    const limitedReply = await signup(proxied, 'd0@example.com', from('203.0.113.10'));
    expect(limitedReply.status).toBe(429);
    expect(await limitedReply.json()).toEqual({ error: 'too_many_requests', message: RATE_LIMITED_MESSAGE });
    expect(limitedReply.headers.get('retry-after')).toMatch(/^\d+$/);

    // POST /unsubscribe is not limited per address (one-click posts), whatever the address.
    for (let i = 0; i < 3; i++) {
      const unsubscribe = await fetch(`${proxied.url}/unsubscribe?token=not-a-token`, { method: 'POST', headers: from('203.0.113.12'), redirect: 'manual' });
      expect(unsubscribe.status).toBe(400);
    }
  });

  it('with no trusted proxy (TRUST_PROXY=0), X-Forwarded-For is ignored and cannot dodge the limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await signup(direct, `spoof${i}@example.com`, { 'x-forwarded-for': `203.0.113.${20 + i}` })).status);
    expect(statuses).toEqual([201, 201, 429]);
  });
});

describe('cross-site signups', () => {
  it('a post from another site (Origin) is refused with a clear 403 and nothing is stored', async () => {
    const response = await signup(server, 'victim@example.com', { origin: 'https://evil.example' });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ error: 'cross_site_request', message: 'Signups are accepted only from the Launched Weekly site itself.' });
    expect(await server.store.findSubscriberByEmail('victim@example.com')).toBeNull();
  });

  it('a post the browser marks Sec-Fetch-Site: cross-site is refused with 403', async () => {
    const response = await signup(server, 'victim2@example.com', { 'sec-fetch-site': 'cross-site' });
    expect(response.status).toBe(403);
    expect(await server.store.findSubscriberByEmail('victim2@example.com')).toBeNull();
  });

  it('a cross-site HTML form post is refused the same way', async () => {
    const response = await fetch(`${server.url}/api/subscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
      body: 'email=victim3%40example.com',
      redirect: 'manual',
    });
    expect(response.status).toBe(403);
    // A person pressed a button: they get a page that says why, not JSON.
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toContain('<h1>This form was sent from another site</h1>');
    expect(await server.store.findSubscriberByEmail('victim3@example.com')).toBeNull();
  });

  it('Sec-Fetch-Site decides over Origin: same-origin with `Origin: null` (our no-referrer token pages) passes, same-site is refused', async () => {
    const fromTokenPage = await signup(server, 'token.page@example.com', { origin: 'null', 'sec-fetch-site': 'same-origin' });
    expect(fromTokenPage.status).toBe(201);
    const sameSite = await signup(server, 'sibling@example.com', { origin: 'http://other.localhost', 'sec-fetch-site': 'same-site' });
    expect(sameSite.status).toBe(403);
    // A client without Sec-Fetch-Site is judged by Origin, and `null` is not our origin.
    expect((await signup(server, 'old.browser@example.com', { origin: 'null' })).status).toBe(403);
    expect(await server.store.findSubscriberByEmail('sibling@example.com')).toBeNull();
  });

  it('the site’s own pages may post (same-origin), and so may clients that send neither header', async () => {
    const own = await signup(server, 'own@example.com', { origin: server.url, 'sec-fetch-site': 'same-origin' });
    expect(own.status).toBe(201);
    const plain = await signup(server, 'curl@example.com');
    expect(plain.status).toBe(201);
  });
});
