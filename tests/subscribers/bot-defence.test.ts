// The bot defences through the real app, on the embedded PGlite and on PostgreSQL: the
// honeypot (JSON and no-JavaScript form), the disposable-domain list, and the two limits, which
// are kept in the database and therefore hold across replicas (two app instances on one store;
// on PostgreSQL, two stores with their own connection pools, as two containers would have).
import type { Agent } from 'node:http';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADDRESS_RATE_LIMITED_MESSAGE, DISPOSABLE_EMAIL_MESSAGE, RATE_LIMITED_MESSAGE } from '../../shared/signup-outcome.ts';
import { createLogger } from '../../server/http/logger.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { openPostgresStore } from '../../server/store/postgres.ts';
import type { Store } from '../../server/store/types.ts';
import { agentFrom, send } from '../support/from-address.ts';
import { createTestDatabase, postgresUrl } from '../support/postgres.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

interface Replicas {
  stores: [Store, Store];
  close(): Promise<void>;
}

const backends: { name: string; available: boolean; open(): Promise<Replicas> }[] = [
  {
    name: 'PGlite',
    available: true,
    async open() {
      // The embedded database has exactly one owner process, so its "replicas" share one store.
      const store = await openPGliteStore(null);
      return { stores: [store, store], close: () => store.close() };
    },
  },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    async open() {
      const db = await createTestDatabase();
      const first = await openPostgresStore(db.url, { max: 4 });
      const second = await openPostgresStore(db.url, { max: 4 });
      return {
        stores: [first, second],
        async close() {
          await Promise.all([first.close(), second.close()]);
          await db.drop();
        },
      };
    },
  },
];

const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

/** Two app instances on one backend's replicas, started once before the backend's tests. */
interface Ctx {
  replicas: Replicas;
  a: TestServer;
  b: TestServer;
  /** Every line both instances have logged so far. */
  logged: string;
  /** An agent that posts from this loopback address. */
  from(address: string): Agent;
  stored(email: string): ReturnType<Store['findSubscriberByEmail']>;
}

/** The honeypot and the disposable-domain list: what a bot is told, and what it leaves behind. */
function trapsAndDisposableDomains(ctx: Ctx) {
  it('a filled honeypot looks like success on the JSON API, stores nothing, and a log line counts it', async () => {
    const agent = ctx.from('127.0.1.1');
    const before = await ctx.replicas.stores[0].countSubscribers();
    const reply = await send(agent, `${ctx.a.url}/api/subscribe`, json({ email: 'bot.json@example.com', source: '/', website: 'https://spam.example' }));
    expect(reply.status).toBe(201);
    expect(JSON.parse(reply.body)).toEqual({ status: 'subscribed' });
    expect(await ctx.stored('bot.json@example.com')).toBeNull();
    expect(await ctx.replicas.stores[0].countSubscribers()).toEqual(before);
    expect(ctx.logged).toMatch(/"honeypot":1\b.*signup honeypot filled \(1 since start\)/);
    expect(ctx.logged).not.toContain('bot.json@example.com');

    // The same request with the field empty (a person's) signs up.
    const person = await send(agent, `${ctx.a.url}/api/subscribe`, json({ email: 'person.json@example.com', source: '/', website: '' }));
    expect(person.status).toBe(201);
    expect(await ctx.stored('person.json@example.com')).toMatchObject({ active: true });
  });

  it('a filled honeypot on the no-JavaScript form redirects exactly as a success does, and stores nothing', async () => {
    const agent = ctx.from('127.0.1.2');
    const trapped = await send(agent, `${ctx.a.url}/api/subscribe`, form({ email: 'bot.form@example.com', source: '/about', website: 'x' }));
    const person = await send(agent, `${ctx.a.url}/api/subscribe`, form({ email: 'person.form@example.com', source: '/about', website: '' }));
    expect(trapped.status).toBe(303);
    expect(trapped.headers.location).toBe('/about?signup=subscribed#email-signup');
    expect(person.headers.location).toBe(trapped.headers.location);
    expect(await ctx.stored('bot.form@example.com')).toBeNull();
    expect(await ctx.stored('person.form@example.com')).toMatchObject({ active: true });
    expect(ctx.logged).toMatch(/signup honeypot filled \(2 since start\)/);
  });

  it('refuses disposable-address domains (and their subdomains) with a clear 400, on the API and the form', async () => {
    const agent = ctx.from('127.0.1.3');
    for (const email of ['Throwaway@Mailinator.com', 'someone@sub.mailinator.com', 'x@guerrillamail.com']) {
      const reply = await send(agent, `${ctx.b.url}/api/subscribe`, json({ email }));
      expect(reply.status, email).toBe(400);
      expect(JSON.parse(reply.body)).toEqual({ error: 'invalid_email', message: DISPOSABLE_EMAIL_MESSAGE });
      expect(await ctx.stored(email.toLowerCase())).toBeNull();
    }
    const viaForm = await send(agent, `${ctx.b.url}/api/subscribe`, form({ email: 'form@mailinator.com', source: '/archive' }));
    expect(viaForm.status).toBe(303);
    expect(viaForm.headers.location).toBe('/archive?signup=disposable-email#email-signup');
    const page = await (await fetch(`${ctx.b.url}${viaForm.headers.location as string}`)).text();
    expect(page.replaceAll('<!-- -->', '')).toMatch(/<p role="status"[^>]*><strong>Invalid email<\/strong> Please use a permanent e-mail address, not a disposable one\.<\/p>/);
    expect(await ctx.stored('form@mailinator.com')).toBeNull();
  });
}

/** The per-address and per-network limits, kept in the database and so shared by both replicas. */
function rateLimits(ctx: Ctx) {
  it('allows at most 3 signups of one e-mail address per day, counted across replicas and network addresses', async () => {
    const email = 'bombed.victim@example.com';
    const statuses = [];
    // From four network addresses and both replicas: the count is the address's, wherever from.
    statuses.push((await send(ctx.from('127.0.2.1'), `${ctx.a.url}/api/subscribe`, json({ email }))).status);
    statuses.push((await send(ctx.from('127.0.2.2'), `${ctx.b.url}/api/subscribe`, json({ email }))).status);
    statuses.push((await send(ctx.from('127.0.2.3'), `${ctx.a.url}/api/subscribe`, json({ email: 'Bombed.Victim@Example.com ' }))).status);
    const fourth = await send(ctx.from('127.0.2.4'), `${ctx.b.url}/api/subscribe`, json({ email }));
    expect([...statuses, fourth.status]).toEqual([201, 409, 409, 429]);
    expect(JSON.parse(fourth.body)).toEqual({ error: 'too_many_requests', message: ADDRESS_RATE_LIMITED_MESSAGE });
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(86_000);

    const viaForm = await send(ctx.from('127.0.2.5'), `${ctx.a.url}/api/subscribe`, form({ email, source: '/' }));
    expect(viaForm.headers.location).toBe('/?signup=address-rate-limited#email-signup');
    // Another address from the same client is not affected.
    expect((await send(ctx.from('127.0.2.5'), `${ctx.a.url}/api/subscribe`, json({ email: 'someone.else@example.com' }))).status).toBe(201);
  });

  it('a post refused for its network address does not count against the mailbox it names', async () => {
    const agent = ctx.from('127.0.4.1');
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await send(agent, `${ctx.a.url}/api/subscribe`, json({ email: `spent.${i}@example.com` }))).status);
    // Both counts go to the database in one statement; the mailbox's is given back.
    const refused = await send(agent, `${ctx.a.url}/api/subscribe`, json({ email: 'spared.victim@example.com' }));
    expect([...statuses, refused.status]).toEqual([201, 201, 201, 201, 429]);
    expect(JSON.parse(refused.body)).toEqual({ error: 'too_many_requests', message: RATE_LIMITED_MESSAGE });
    expect(await ctx.stored('spared.victim@example.com')).toBeNull();
    // The mailbox still has its 3 signups of the day, from other network addresses and replicas.
    const email = 'spared.victim@example.com';
    const later = [];
    for (const [address, server] of [['127.0.4.2', ctx.b], ['127.0.4.3', ctx.a], ['127.0.4.4', ctx.b], ['127.0.4.5', ctx.a]] as const) {
      later.push((await send(ctx.from(address), `${server.url}/api/subscribe`, json({ email }))).status);
    }
    expect(later).toEqual([201, 409, 409, 429]);
  });

  it('limits posts per network address across replicas (RATE_LIMIT_PER_MINUTE=4 shared by both)', async () => {
    const agent = ctx.from('127.0.3.1');
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      const server = i % 2 === 0 ? ctx.a : ctx.b;
      statuses.push((await send(agent, `${server.url}/api/subscribe`, json({ email: `replica.count.${i}@example.com` }))).status);
    }
    expect(statuses).toEqual([201, 201, 201, 201, 429, 429]);
    const refused = await send(agent, `${ctx.b.url}/api/subscribe`, json({ email: 'one.more@example.com' }));
    expect(JSON.parse(refused.body)).toEqual({ error: 'too_many_requests', message: RATE_LIMITED_MESSAGE });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Honeypot and invalid posts count too: the limit is on posts, not on successes.
    const other = ctx.from('127.0.3.2');
    const mixed = [];
    for (const body of [{ email: 'x', website: '' }, { email: 'y@example.com', website: 'filled' }, { email: 'z@mailinator.com' }, { email: 'ok.1@example.com' }, { email: 'ok.2@example.com' }]) {
      mixed.push((await send(other, `${ctx.a.url}/api/subscribe`, json(body))).status);
    }
    expect(mixed).toEqual([400, 201, 400, 201, 429]);
    // A different network address still gets through.
    expect((await send(ctx.from('127.0.3.3'), `${ctx.b.url}/api/subscribe`, json({ email: 'next.door@example.com' }))).status).toBe(201);
  });
}

for (const backend of backends) {
  describe.skipIf(!backend.available)(`Bot defences on ${backend.name}`, () => {
    const agents: Agent[] = [];
    const ctx = {
      logged: '',
      // Each case signs up from its own loopback address, so the per-address counts stay apart.
      from: (address: string) => {
        const agent = agentFrom(address);
        agents.push(agent);
        return agent;
      },
      stored: (email: string) => ctx.replicas.stores[0].findSubscriberByEmail(email),
    } as Ctx;

    beforeAll(async () => {
      ctx.replicas = await backend.open();
      const destination = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          ctx.logged += chunk.toString();
          callback();
        },
      });
      const logger = createLogger({ level: 'info', pretty: false, destination });
      const start = (store: Store) => startTestServer({ store, config: { rateLimitPerMinute: 4 }, logger });
      [ctx.a, ctx.b] = await Promise.all([start(ctx.replicas.stores[0]), start(ctx.replicas.stores[1])]);
    });

    afterAll(async () => {
      for (const agent of agents) agent.destroy();
      await Promise.all([ctx.a?.close(), ctx.b?.close()]);
      await ctx.replicas?.close();
    });

    trapsAndDisposableDomains(ctx);
    rateLimits(ctx);
  });
}
