// A signup flood, bounded and on loopback: in double opt-in mode, 5,000 signups from 50 network
// addresses over 500 random mailboxes plus 200 honeypot posts, with one real reader signing up in
// Chromium in the middle from another address, on the embedded defaults and the default limit
// (RATE_LIMIT_PER_MINUTE=10). Afterwards: at most one confirmation e-mail per mailbox, none for a
// honeypot post, the reader has theirs, and no 5xx. The figures are printed.
import type { Agent } from 'node:http';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HONEYPOT_FIELD } from '../../shared/honeypot.ts';
import { chromiumAvailable, launchChromium } from '../support/browser.ts';
import { agentFrom, inParallel, send } from '../support/from-address.ts';
import { settledOutbox } from '../support/outbox.ts';
import { seededRandom } from '../support/seeded-random.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const SIGNUPS = 5_000;
const HONEYPOT_POSTS = 200;
const MAILBOXES = 500;
const NETWORK_ADDRESSES = Array.from({ length: 50 }, (_, i) => `127.0.1.${i + 1}`);
const READER = 'real.reader.in.the.flood@example.com';

interface Post {
  email: string;
  trap: boolean;
  viaForm: boolean;
}

function floodPlan(): Post[] {
  const { next } = seededRandom(20261123);
  const posts: Post[] = [];
  for (let i = 0; i < SIGNUPS; i++) posts.push({ email: `victim${Math.floor(next() * MAILBOXES)}@flood.example`, trap: false, viaForm: next() < 0.2 });
  for (let i = 0; i < HONEYPOT_POSTS; i++) posts.push({ email: `trap${i}@flood.example`, trap: true, viaForm: next() < 0.5 });
  // Shuffled, so honeypot posts and signups arrive mixed.
  for (let i = posts.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [posts[i], posts[j]] = [posts[j]!, posts[i]!];
  }
  return posts;
}

describe.skipIf(!chromiumAvailable)('a signup flood in double opt-in mode', () => {
  let server: TestServer;
  let browser: Browser;
  let agents: Agent[];

  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer({ config: { signupConfirmation: 'double', rateLimitPerMinute: 10 } }), launchChromium()]);
    // A connection per post, as a bot spraying posts opens them.
    agents = NETWORK_ADDRESSES.map((address) => agentFrom(address, { keepAlive: false }));
  });

  afterAll(async () => {
    for (const agent of agents ?? []) agent.destroy();
    await browser?.close();
    await server?.close();
  });

  /** The reader, on the home page from 127.0.0.1, types their address and presses Subscribe. */
  async function realReaderSignsUp(): Promise<string> {
    const page = await browser.newPage();
    try {
      await page.goto(`${server.url}/`, { waitUntil: 'networkidle' });
      await page.waitForSelector('#email-signup form[novalidate]');
      await page.getByPlaceholder('Enter your email').fill(READER);
      await page.getByRole('button', { name: 'Subscribe' }).click();
      const toast = page.locator('[data-sonner-toast]', { hasText: 'Check your inbox' });
      await toast.waitFor({ timeout: 60_000 });
      return (await toast.textContent()) ?? '';
    } finally {
      await page.close();
    }
  }

  it('sends at most one confirmation per mailbox, none for honeypot posts, the reader’s, and never a 5xx', async () => {
    const posts = floodPlan();
    const statuses: Record<string, number> = {};
    let done = 0;
    let reader: Promise<string> | undefined;
    const started = performance.now();
    await inParallel(posts, NETWORK_ADDRESSES.length, async (post, index) => {
      const fields = { email: post.email, source: '/', ...(post.trap ? { [HONEYPOT_FIELD]: 'https://buy-followers.example' } : {}) };
      const reply = await send(
        agents[index % agents.length]!,
        `${server.url}/api/subscribe`,
        post.viaForm
          ? { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() }
          : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(fields) },
      );
      const outcome = post.viaForm ? `303 ${/signup=([a-z-]+)/.exec(String(reply.headers.location))?.[1] ?? reply.headers.location}` : String(reply.status);
      statuses[outcome] = (statuses[outcome] ?? 0) + 1;
      done += 1;
      if (done === posts.length / 2) reader = realReaderSignsUp();
    });
    const floodSeconds = (performance.now() - started) / 1000;
    const readerToast = await reader!;

    const mail = await settledOutbox(server, 30_000);
    const perMailbox = new Map<string, number>();
    for (const eml of mail) perMailbox.set(eml.to, (perMailbox.get(eml.to) ?? 0) + 1);
    const floodMail = mail.filter((eml) => eml.to.endsWith('@flood.example'));
    const counts = await server.store.countSubscribers();
    console.log(
      [
        `[signup flood] ${posts.length} posts (${SIGNUPS} signups over ${MAILBOXES} mailboxes + ${HONEYPOT_POSTS} honeypot) from ${NETWORK_ADDRESSES.length} addresses in ${floodSeconds.toFixed(1)} s (${Math.round(posts.length / floodSeconds)}/s)`,
        `  answers: ${JSON.stringify(statuses)}`,
        `  confirmation e-mails: ${floodMail.length} to ${new Set(floodMail.map((e) => e.to)).size} flood mailboxes (most to one mailbox: ${Math.max(0, ...floodMail.map((e) => perMailbox.get(e.to)!))}), ${mail.filter((e) => e.to.startsWith('trap')).length} to honeypot addresses, ${perMailbox.get(READER) ?? 0} to the real reader`,
        `  stored: ${JSON.stringify(counts)}`,
      ].join('\n'),
    );

    expect(Object.keys(statuses).filter((status) => status.startsWith('5'))).toEqual([]);
    expect([...perMailbox.values()].every((n) => n <= 1)).toBe(true);
    expect(mail.filter((eml) => eml.to.startsWith('trap'))).toEqual([]);
    for (let i = 0; i < HONEYPOT_POSTS; i += 40) expect(await server.store.findSubscriberByEmail(`trap${i}@flood.example`)).toBeNull();
    expect(readerToast).toContain('We sent you a link to confirm your address. The Monday e-mail starts once you click it.');
    const readersMail = mail.filter((eml) => eml.to === READER);
    expect(readersMail).toHaveLength(1);
    expect(readersMail[0]!.text).toContain('/confirm?token=');
    // The limits did the work: at most 10 posts a minute from each of the 50 addresses got through.
    expect(floodMail.length).toBeLessThanOrEqual(NETWORK_ADDRESSES.length * 10 * Math.ceil(floodSeconds / 60 + 1));
  }, 300_000);
});
