// One contract, three backends: the embedded PGlite, a real PostgreSQL, and Supabase's REST
// interface (a PostgREST stand-in over real Postgres with Supabase's roles, grants and our RLS).
// Every backend must give the same answers, since the server and the job cannot tell them apart.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normalizeEmail } from '../../content/email-address.ts';
import { migrate } from '../../server/store/migrate.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { createPgClient, openPostgresStore } from '../../server/store/postgres.ts';
import { sqlStore } from '../../server/store/sql-store.ts';
import { openSupabaseStore, SupabaseRequestError } from '../../server/store/supabase.ts';
import { StoreUnavailableError, type Store } from '../../server/store/types.ts';
import { startFakePostgrest, unsignedJwt, type FakePostgrest } from '../support/fake-postgrest.ts';
import { createTestDatabase, postgresUrl, type TestDatabase } from '../support/postgres.ts';
import { createSupabaseRoles } from '../support/supabase-roles.ts';
import { addSignup, deliveredTo, listActiveSubscribers, recordDeliveries } from '../support/store-ops.ts';

async function closedPortUrl(): Promise<{ port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve({ port: address.port }) : reject(new Error('no port'))));
    });
  });
}

/** A database with Supabase's roles and every migration applied, as `supabase db push` leaves it. */
async function createSupabaseDatabase(): Promise<TestDatabase> {
  return createTestDatabase({ from: 'supabase' });
}

interface Opened {
  store: Store;
  cleanup(): Promise<void>;
}

interface Backend {
  name: string;
  available: boolean;
  open(): Promise<Opened>;
  /** A store whose database cannot be reached, to show the failure is reported as an outage. */
  openUnreachable(): Promise<Opened>;
}

const backends: Backend[] = [
  {
    name: 'pglite',
    available: true,
    async open() {
      const store = await openPGliteStore(null);
      return { store, cleanup: () => store.close() };
    },
    async openUnreachable() {
      const store = await openPGliteStore(null);
      await store.close();
      return { store, cleanup: async () => {} };
    },
  },
  {
    name: 'postgres',
    available: postgresUrl !== null,
    async open() {
      const db = await createTestDatabase();
      const store = await openPostgresStore(db.url);
      return {
        store,
        async cleanup() {
          await store.close();
          await db.drop();
        },
      };
    },
    async openUnreachable() {
      const { port } = await closedPortUrl();
      const store = sqlStore('postgres', createPgClient(`postgres://postgres@127.0.0.1:${port}/nothing`));
      return { store, cleanup: () => store.close() };
    },
  },
  {
    name: 'supabase',
    available: postgresUrl !== null,
    async open() {
      const db = await createSupabaseDatabase();
      const fake = await startFakePostgrest(db.url);
      const store = await openSupabaseStore({ url: fake.url, anonKey: fake.anonKey, serviceRoleKey: fake.serviceRoleKey });
      return {
        store,
        async cleanup() {
          await store.close();
          await fake.close();
          await db.drop();
        },
      };
    },
    async openUnreachable() {
      // A gateway that was there and is gone: nothing listens on its port any more.
      const db = await createSupabaseDatabase();
      const fake = await startFakePostgrest(db.url);
      const store = await openSupabaseStore({ url: fake.url, anonKey: fake.anonKey, serviceRoleKey: fake.serviceRoleKey });
      await fake.close();
      return {
        store,
        async cleanup() {
          await store.close();
          await db.drop();
        },
      };
    },
  },
];

const RECAP = '2025-07-14';

/** The store one backend's contract describe opens in beforeAll; its tests run in order and build on each other's rows. */
interface ContractContext {
  backend: Backend;
  store: Store;
}

for (const backend of backends) {
  describe.skipIf(!backend.available)(`Store contract on ${backend.name}`, () => {
    const ctx = { backend } as ContractContext;
    let opened: Opened;

    beforeAll(async () => {
      opened = await backend.open();
      ctx.store = opened.store;
    });

    afterAll(async () => {
      await opened?.cleanup();
    });

    readinessAndSignupLimits(ctx);
    signups(ctx);
    leavingPagingAndCounting(ctx);
    ledgerAndLease(ctx);
    digestBatchesAndOutage(ctx);
  });
}

/** Readiness, and the signup limits counted in the database. */
function readinessAndSignupLimits(ctx: ContractContext) {
  it('reports itself ready once migrated', async () => {
    const { store } = ctx;
    await expect(store.checkReady()).resolves.toBeUndefined();
  });

  it('counts signup-limit hits in one shared window: 40 racing hits are 40 points, none lost', async () => {
    const { store } = ctx;
    const first = await store.hitRateLimit('contract-key', 1, 60_000, false);
    expect(first.points).toBe(1);
    expect(first.msLeft).toBeGreaterThan(50_000);
    expect(first.msLeft).toBeLessThanOrEqual(60_000);
    const raced = await Promise.all(Array.from({ length: 40 }, () => store.hitRateLimit('contract-key', 1, 60_000, false)));
    expect(raced.map((hit) => hit.points).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 2));
    // A forced hit starts the window again.
    expect(await store.hitRateLimit('contract-key', 2, 60_000, true)).toMatchObject({ points: 2 });
    expect(await store.hitRateLimit('contract-key', 1, 60_000, false)).toMatchObject({ points: 3 });
  });

  it('counts a signup against its network address and mailbox and writes its row in one call, only within both limits', async () => {
    const { store } = ctx;
    const network = (n: number) => ({ key: `counted-network-${n}`, limit: 2, windowMs: 60_000 });
    const mailbox = (n: number) => ({ key: `counted-mailbox-${n}`, limit: 1, windowMs: 86_400_000 });
    const request = (email: string) => ({ email, source: '/', mode: 'single' as const, networkHash: null, addressHashes: [`counted-hash-${email}`] });

    const first = await store.signUpCounted(network(1), mailbox(1), request('counted-new@example.com'));
    const written = await store.findSubscriberByEmail('counted-new@example.com');
    expect(first).toEqual({ network: { points: 1, msLeft: expect.any(Number) }, mailbox: { points: 1, msLeft: expect.any(Number) }, decision: { outcome: 'subscribed', subscriberId: written!.id } });
    expect(first.mailbox!.msLeft).toBeGreaterThan(86_000_000);

    // The mailbox has used its day: counted, not written.
    const overMailbox = await store.signUpCounted(network(1), mailbox(1), request('counted-other-spelling@example.com'));
    expect(overMailbox).toMatchObject({ network: { points: 2 }, mailbox: { points: 2 }, decision: null });
    expect(await store.findSubscriberByEmail('counted-other-spelling@example.com')).toBeNull();

    // The network address is over its limit: the mailbox is not counted, nothing is written.
    const overNetwork = await store.signUpCounted(network(1), mailbox(2), request('counted-third@example.com'));
    expect(overNetwork).toMatchObject({ network: { points: 3 }, mailbox: null, decision: null });
    expect(await store.findSubscriberByEmail('counted-third@example.com')).toBeNull();
    expect((await store.signUpCounted(network(2), mailbox(2), request('counted-third@example.com'))).mailbox).toMatchObject({ points: 1 });

    // An address already on the list: counted, and decided as any signup.
    const again = await store.signUpCounted(network(3), mailbox(3), request('counted-new@example.com'));
    expect(again.decision).toEqual({ outcome: 'already_subscribed', subscriberId: written!.id });
  });

  it('starts a signup-limit window again once it has run out', async () => {
    const { store } = ctx;
    expect(await store.hitRateLimit('short-window', 5, 50, false)).toMatchObject({ points: 5 });
    await new Promise((resolve) => setTimeout(resolve, 120));
    const fresh = await store.hitRateLimit('short-window', 1, 60_000, false);
    expect(fresh.points).toBe(1);
    expect(fresh.msLeft).toBeGreaterThan(50_000);
  });
}

/** Signups one by one and racing, and a row the database refuses among others. */
function signups(ctx: ContractContext) {
  it('adds a new address as an active subscriber', async () => {
    const { store } = ctx;
    const before = new Date(Date.now() - 60_000);
    expect(await addSignup(store, 'ada@example.com', '/')).toBe('subscribed');
    const found = await store.findSubscriberByEmail('ada@example.com');
    expect(found).toMatchObject({ email: 'ada@example.com', active: true });
    expect(found!.createdAt.getTime()).toBeGreaterThan(before.getTime());
    expect(await store.findSubscriber(found!.id)).toEqual(found);
  });

  it('finds nothing for unknown or malformed ids and addresses', async () => {
    const { store } = ctx;
    expect(await store.findSubscriber('00000000-0000-4000-8000-000000000000')).toBeNull();
    expect(await store.findSubscriber('not-an-id')).toBeNull();
    expect(await store.findSubscriberByEmail('nobody@example.com')).toBeNull();
    expect(await store.removeSubscriber('00000000-0000-4000-8000-000000000000', 'unsubscribed')).toBe(false);
    expect(await store.removeSubscriber('not-an-id', 'unsubscribed')).toBe(false);
  });

  it('reports the same address in another case or with spaces as already subscribed', async () => {
    const { store } = ctx;
    expect(await addSignup(store, normalizeEmail('grace@example.com'), '/')).toBe('subscribed');
    const counts = await store.countSubscribers();
    expect(await addSignup(store, normalizeEmail('  Grace@EXAMPLE.com '), '/archive')).toBe('already_subscribed');
    expect(await addSignup(store, normalizeEmail('GRACE@example.COM'), null)).toBe('already_subscribed');
    expect(await store.countSubscribers()).toEqual(counts);
  });

  it('keeps exactly one row when 50 signups of one address race', async () => {
    const { store } = ctx;
    const before = await store.countSubscribers();
    const results = await Promise.all(Array.from({ length: 50 }, () => addSignup(store, 'race@example.com', '/')));
    expect(results.filter((r) => r === 'subscribed')).toHaveLength(1);
    expect(results.filter((r) => r === 'already_subscribed')).toHaveLength(49);
    const after = await store.countSubscribers();
    expect(after.active).toBe(before.active + 1);
    const all = await store.listAllSubscribers(null, 10_000);
    expect(all.filter((s) => s.email === 'race@example.com')).toHaveLength(1);
  });

  it('answers each of 300 concurrent signups over 100 addresses as if they came one by one', async () => {
    const { store } = ctx;
    // Enough at once that many race on the same row: duplicates at the same moment, a returning reader.
    const addresses = Array.from({ length: 100 }, (_, i) => `crowd${i}@batch.example`);
    await addSignup(store, addresses[0]!, '/');
    const returning = (await store.findSubscriberByEmail(addresses[0]!))!;
    await store.removeSubscriber(returning.id, 'unsubscribed');
    await addSignup(store, addresses[1]!, '/');
    const before = await store.countSubscribers();

    const attempts = [...addresses, ...addresses, ...addresses].map((email, i) => ({ email, i }));
    attempts.sort((a, b) => ((a.i * 7919) % 300) - ((b.i * 7919) % 300)); // interleaved, not grouped
    const results = await Promise.all(attempts.map(({ email }) => addSignup(store, email, '/')));

    const subscribedBy = new Map<string, number>();
    results.forEach((result, i) => {
      if (result === 'subscribed') subscribedBy.set(attempts[i]!.email, (subscribedBy.get(attempts[i]!.email) ?? 0) + 1);
    });
    // One "subscribed" per address that was not active (98 new and the one who came back);
    // the one already active gets none.
    expect(subscribedBy.size).toBe(99);
    expect([...subscribedBy.values()].every((n) => n === 1)).toBe(true);
    expect(subscribedBy.has(addresses[1]!)).toBe(false);
    expect(await store.findSubscriberByEmail(addresses[0]!)).toMatchObject({ id: returning.id, active: true });
    expect(await store.countSubscribers()).toMatchObject({ active: before.active + 99, inactive: before.inactive - 1 });
  });

  it('fails only the signup whose row the database refuses when others are written with it', async () => {
    const { store } = ctx;
    // A NUL character is refused by PostgreSQL's text type: a row-level error, not an outage.
    const good = Array.from({ length: 40 }, (_, i) => `neighbour${i}@batch.example`);
    const outcomes = await Promise.allSettled([...good.slice(0, 20), 'nul\u0000@batch.example', ...good.slice(20)].map((email) => addSignup(store, email, '/')));
    const refused = outcomes[20]!;
    expect(refused.status).toBe('rejected');
    expect((refused as PromiseRejectedResult).reason).not.toBeInstanceOf(StoreUnavailableError);
    expect(outcomes.filter((o, i) => i !== 20 && o.status === 'fulfilled' && o.value === 'subscribed')).toHaveLength(40);
    for (const email of good) expect(await store.findSubscriberByEmail(email), email).toMatchObject({ active: true });
  });
}

/** Leaving and coming back, paging through subscribers, and counting them. */
function leavingPagingAndCounting(ctx: ContractContext) {
  it('lets a subscriber leave, and come back by signing up again', async () => {
    const { store } = ctx;
    await addSignup(store, 'linus@example.com', '/');
    const { id } = (await store.findSubscriberByEmail('linus@example.com'))!;
    const before = await store.countSubscribers();

    expect(await store.removeSubscriber(id, 'unsubscribed')).toBe(true);
    expect(await store.removeSubscriber(id, 'unsubscribed')).toBe(true); // a replay changes nothing
    expect(await store.findSubscriber(id)).toMatchObject({ active: false });
    expect(await store.countSubscribers()).toMatchObject({ active: before.active - 1, inactive: before.inactive + 1 });

    expect(await addSignup(store, 'linus@example.com', '/recap/2025-07-14')).toBe('subscribed');
    expect(await store.findSubscriber(id)).toMatchObject({ id, active: true });
    expect(await store.countSubscribers()).toEqual(before);
    // Back and active: another signup is a duplicate again.
    expect(await addSignup(store, 'linus@example.com', '/')).toBe('already_subscribed');
  });

  it('pages through active subscribers in a stable order, without gaps or repeats, skipping those who left', async () => {
    const { store } = ctx;
    const emails = Array.from({ length: 250 }, (_, i) => `reader${String(i).padStart(3, '0')}@paging.example`);
    for (let i = 0; i < emails.length; i += 25) {
      const results = await Promise.all(emails.slice(i, i + 25).map((email) => addSignup(store, email, 'import')));
      expect(results.every((r) => r === 'subscribed')).toBe(true);
    }
    const removed = new Set(emails.filter((_, i) => i % 7 === 3));
    for (const email of removed) {
      const { id } = (await store.findSubscriberByEmail(email))!;
      expect(await store.removeSubscriber(id, 'unsubscribed')).toBe(true);
    }

    const seen: string[] = [];
    const seenEmails: string[] = [];
    let after: string | null = null;
    let pages = 0;
    for (;;) {
      const page = await listActiveSubscribers(store, after, 40);
      if (page.length === 0) break;
      expect(page.length).toBeLessThanOrEqual(40);
      pages++;
      seen.push(...page.map((s) => s.id));
      seenEmails.push(...page.map((s) => s.email));
      after = page[page.length - 1]!.id;
    }
    const ordered = [...seen].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    expect(seen).toEqual(ordered);
    expect(new Set(seen).size).toBe(seen.length);
    const { active } = await store.countSubscribers();
    expect(seen).toHaveLength(active);
    expect(pages).toBe(Math.ceil(active / 40));
    const pagedSet = new Set(seenEmails);
    for (const email of emails) expect(pagedSet.has(email)).toBe(!removed.has(email));

    // The export walk sees everyone, active or not, in the same order.
    const everyone = await store.listAllSubscribers(null, 100_000);
    const counts = await store.countSubscribers();
    expect(everyone).toHaveLength(counts.active + counts.inactive);
    expect(everyone.filter((s) => !s.active).map((s) => s.email)).toEqual(expect.arrayContaining([...removed]));
    expect(everyone.map((s) => s.id)).toEqual([...everyone.map((s) => s.id)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it('counts active subscribers and those who left', async () => {
    const { store } = ctx;
    const before = await store.countSubscribers();
    await addSignup(store, 'count1@example.com', '/');
    await addSignup(store, 'count2@example.com', '/');
    await addSignup(store, 'count3@example.com', '/');
    const { id } = (await store.findSubscriberByEmail('count2@example.com'))!;
    await store.removeSubscriber(id, 'complained');
    expect(await store.countSubscribers()).toEqual({
      active: before.active + 2,
      inactive: before.inactive + 1,
      byStatus: { ...before.byStatus, active: before.active + 2, complained: before.byStatus.complained + 1 },
    });
  });
}

/** The delivery ledger and the sending lease. */
function ledgerAndLease(ctx: ContractContext) {
  it('keeps one ledger row per recap and subscriber, however often it is recorded', async () => {
    const { store } = ctx;
    const page = await listActiveSubscribers(store, null, 150);
    expect(page).toHaveLength(150);
    const [a, b, c] = page.map((s) => s.id) as [string, string, string];
    expect(await deliveredTo(store, RECAP, [])).toEqual(new Set());
    expect(await deliveredTo(store, RECAP, [a, b, c])).toEqual(new Set());
    expect(await store.countDeliveries(RECAP)).toBe(0);

    await recordDeliveries(store, RECAP, [
      { subscriberId: a, providerMessageId: 'msg-a' },
      { subscriberId: b, providerMessageId: null },
    ]);
    expect(await deliveredTo(store, RECAP, [a, b, c])).toEqual(new Set([a, b]));
    expect(await store.countDeliveries(RECAP)).toBe(2);

    await recordDeliveries(store, RECAP, [
      { subscriberId: a, providerMessageId: 'msg-a-again' },
      { subscriberId: c, providerMessageId: 'msg-c' },
    ]);
    await recordDeliveries(store, RECAP, []);
    expect(await store.countDeliveries(RECAP)).toBe(3);
    expect(await store.countDeliveries('2025-07-06')).toBe(0);
    expect(await deliveredTo(store, '2025-07-06', [a, b, c])).toEqual(new Set());

    // A whole page of the job at once.
    const ids = page.map((s) => s.id);
    await recordDeliveries(store, RECAP, ids.map((subscriberId) => ({ subscriberId, providerMessageId: `m-${subscriberId}` })));
    expect(await store.countDeliveries(RECAP)).toBe(150);
    expect(await deliveredTo(store, RECAP, ids)).toEqual(new Set(ids));
  });

  it('gives the sending lease to one holder at a time, renews it, lets it expire and releases it', async () => {
    const { store } = ctx;
    const week = '2025-06-30';
    expect(await store.acquireDigestLock(week, 'replica-a', 60_000)).toBe(true);
    expect(await store.acquireDigestLock(week, 'replica-b', 60_000)).toBe(false);
    expect(await store.acquireDigestLock(week, 'replica-a', 60_000)).toBe(true);
    // Another week is another lease.
    expect(await store.acquireDigestLock('2025-06-23', 'replica-b', 60_000)).toBe(true);
    // Only the holder releases it.
    await store.releaseDigestLock(week, 'replica-b');
    expect(await store.acquireDigestLock(week, 'replica-b', 60_000)).toBe(false);
    await store.releaseDigestLock(week, 'replica-a');
    expect(await store.acquireDigestLock(week, 'replica-b', 60_000)).toBe(true);

    const racing = await Promise.all(Array.from({ length: 10 }, (_, i) => store.acquireDigestLock('2025-06-16', `racer-${i}`, 60_000)));
    expect(racing.filter(Boolean)).toHaveLength(1);

    const short = '2025-06-09';
    // Long enough that a loaded machine cannot let it lapse between the two calls.
    expect(await store.acquireDigestLock(short, 'crashed', 2_000)).toBe(true);
    expect(await store.acquireDigestLock(short, 'successor', 60_000)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await store.acquireDigestLock(short, 'successor', 60_000)).toBe(true);
    expect(await store.acquireDigestLock(short, 'crashed', 200)).toBe(false);
  });
}

/** Digest batches and runs, and a database that cannot be reached. */
function digestBatchesAndOutage(ctx: ContractContext) {
  it('writes digest batches ahead of sending, settles each once with its ledger rows, and keeps a run history', async () => {
    const { store, backend } = ctx;
    const week = '2025-05-05';
    for (const email of ['batch-a@example.com', 'batch-b@example.com', 'batch-c@example.com', 'batch-d@example.com']) await addSignup(store, email, '/');
    const [a, b, c, d] = await Promise.all(['batch-a', 'batch-b', 'batch-c', 'batch-d'].map(async (n) => (await store.findSubscriberByEmail(`${n}@example.com`))!));
    await store.removeSubscriber(d!.id, 'bounced');

    const content = { contentHash: `hash-${backend.name}`, recapDate: week, sender: 'LW <digest@example.com>', siteUrl: 'https://lw.test', secretFingerprint: 'f1', subject: 'S', html: '<p>h</p>', bodyText: 't' };
    await store.saveDigestContent(content);
    await store.saveDigestContent({ ...content, subject: 'changed' }); // the first one is kept
    expect(await store.findDigestContent(content.contentHash)).toEqual(content);
    expect(await store.findDigestContent('no-such-hash')).toBeNull();

    const runId = await store.startDigestRun('manual', new Date('2025-05-05T09:00:00Z'));
    const undeliveredBefore = await store.listUndelivered(week, null, 100_000);
    expect(undeliveredBefore.map((s) => s.id)).toEqual(expect.arrayContaining([a!.id, b!.id, c!.id]));
    expect(undeliveredBefore.map((s) => s.id)).not.toContain(d!.id);

    // The bounced subscriber is dropped by the write itself; the order given is kept.
    const written = (await store.writeDigestBatch({ recapDate: week, runId, idempotencyKey: `key-1-${backend.name}`, contentHash: content.contentHash, subscriberIds: [c!.id, d!.id, a!.id], createdAt: new Date('2025-05-05T09:00:01Z') }))!;
    expect(written).toMatchObject({ recapDate: week, sequence: 1, subscriberIds: [c!.id, a!.id], state: 'pending', runId, providerIds: null, settledAt: null });
    expect(written.createdAt.toISOString()).toBe('2025-05-05T09:00:01.000Z');
    // Nobody left: no batch. Members of an open batch are in no other and are not planned again.
    expect(await store.writeDigestBatch({ recapDate: week, runId, idempotencyKey: `key-x-${backend.name}`, contentHash: content.contentHash, subscriberIds: [d!.id, a!.id], createdAt: new Date() })).toBeNull();
    const undelivered = (await store.listUndelivered(week, null, 100_000)).map((s) => s.id);
    expect(undelivered).toContain(b!.id);
    expect(undelivered).not.toContain(a!.id);
    expect(undelivered).not.toContain(c!.id);
    expect(undelivered).toEqual([...undelivered].sort());

    expect((await store.openDigestBatches(week)).map((x) => x.id)).toEqual([written.id]);
    expect((await store.openDigestBatches(null)).map((x) => x.id)).toContain(written.id);
    expect(await store.findDigestBatch(written.id)).toEqual(written);
    expect(await store.findDigestBatch('999999999')).toBeNull();
    expect(await store.findDigestBatch('not-a-number')).toBeNull();
    const recipients = await store.digestRecipients([c!.id, d!.id]);
    expect(recipients.sort((x, y) => x.email.localeCompare(y.email))).toEqual([
      // Each with the share code the Monday e-mail's footer links to.
      { id: c!.id, email: 'batch-c@example.com', active: true, shareCode: expect.stringMatching(/^[0-9a-f]{16}$/) },
      { id: d!.id, email: 'batch-d@example.com', active: false, shareCode: expect.stringMatching(/^[0-9a-f]{16}$/) },
    ]);

    // Someone in a written batch who leaves stays in it; settling records only the accepted.
    await store.removeSubscriber(a!.id, 'unsubscribed');
    const settledAt = new Date('2025-05-05T09:00:02Z');
    const failure = { reason: 'validation_error', recipients: [{ id: a!.id, reason: 'validation_error' }] };
    expect(await store.settleDigestBatch(written.id, { state: 'sent', accepted: [{ subscriberId: c!.id, providerMessageId: 'msg-c' }], failure, at: settledAt })).toBe(true);
    expect(await store.settleDigestBatch(written.id, { state: 'failed', failure, at: settledAt })).toBe(false);
    expect(await store.findDigestBatch(written.id)).toMatchObject({ state: 'sent', providerIds: ['msg-c', null], failure });
    expect(await deliveredTo(store, week, [a!.id, c!.id])).toEqual(new Set([c!.id]));
    expect(await store.openDigestBatches(week)).toEqual([]);

    // Unknown: still open (its members are not planned), settled by a person as "went out".
    const second = (await store.writeDigestBatch({ recapDate: week, runId, idempotencyKey: `key-2-${backend.name}`, contentHash: content.contentHash, subscriberIds: [b!.id], createdAt: new Date() }))!;
    expect(second.sequence).toBe(2);
    expect(await store.markDigestBatchUnknown(second.id, 'too old')).toBe(true);
    expect((await store.openDigestBatches(week)).map((x) => [x.id, x.state, x.failure?.reason])).toEqual([[second.id, 'unknown', 'too old']]);
    expect((await store.listUndelivered(week, null, 100_000)).map((s) => s.id)).not.toContain(b!.id);
    expect(await store.settleDigestBatch(second.id, { state: 'skipped', at: settledAt })).toBe(true);
    expect(await store.markDigestBatchUnknown(second.id, 'again')).toBe(false);
    expect(await deliveredTo(store, week, [b!.id])).toEqual(new Set([b!.id]));

    await store.finishDigestRun(runId, { recapDate: week, outcome: 'sent', sent: 1, failed: 1, skippedAlreadySent: 0, skippedLeft: 1, unknownBatches: 1, message: 'Sent it.', finishedAt: settledAt });
    const later = await store.startDigestRun('dry-run', new Date('2025-05-06T09:00:00Z'));
    const runs = await store.recentDigestRuns(2);
    expect(runs.map((r) => [r.id, r.kind, r.outcome])).toEqual([
      [later, 'dry-run', null],
      [runId, 'manual', 'sent'],
    ]);
    expect(runs[1]).toMatchObject({ recapDate: week, sent: 1, failed: 1, skippedLeft: 1, unknownBatches: 1, message: 'Sent it.', finishedAt: settledAt });
  });

  it('reports an unreachable database as StoreUnavailableError', async () => {
    const { backend } = ctx;
    const down = await backend.openUnreachable();
    try {
      await expect(addSignup(down.store, 'offline@example.com', '/')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(down.store.checkReady()).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(down.store.countSubscribers()).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await down.cleanup();
    }
  });
}

/** The Supabase store and the database and gateway behind it, opened in the describe's beforeAll. */
interface SupabaseContext {
  db: TestDatabase;
  fake: FakePostgrest;
  store: Store;
}

describe.skipIf(!postgresUrl)('Supabase backend specifics', () => {
  const ctx = {} as SupabaseContext;

  beforeAll(async () => {
    ctx.db = await createSupabaseDatabase();
    ctx.fake = await startFakePostgrest(ctx.db.url);
    ctx.store = await openSupabaseStore({ url: ctx.fake.url, anonKey: ctx.fake.anonKey, serviceRoleKey: ctx.fake.serviceRoleKey });
  });

  afterAll(async () => {
    await ctx.store?.close();
    await ctx.fake?.close();
    await ctx.db?.drop();
  });

  requestsAndReadiness(ctx);
  outagesAndRefusals(ctx);
});

/** Which key the store sends with, how it pages, and when it says it is ready. */
function requestsAndReadiness(ctx: SupabaseContext) {
  it('sends every request with the service key: signups are decided by the database function, not the browser key (the anon role may not insert)', async () => {
    const { store, fake } = ctx;
    fake.requests.length = 0;
    expect(await addSignup(store, 'service-only@example.com', '/')).toBe('subscribed');
    expect(await addSignup(store, 'service-only@example.com', '/')).toBe('already_subscribed');
    const { id } = (await store.findSubscriberByEmail('service-only@example.com'))!;
    await store.removeSubscriber(id, 'unsubscribed');
    expect(await addSignup(store, 'service-only@example.com', '/')).toBe('subscribed');
    await store.hitRateLimit('service-only', 1, 60_000, false);
    await listActiveSubscribers(store, null, 10);
    await store.countSubscribers();
    await store.acquireDigestLock(RECAP, 'a', 1_000);
    await store.checkReady();

    expect(fake.requests.length).toBeGreaterThan(8);
    expect(fake.requests.filter((r) => r.role !== 'service_role')).toEqual([]);
    expect(fake.requests.filter((r) => r.path.startsWith('/rest/v1/rpc/signup_decide'))).toHaveLength(3);
    expect(fake.requests.filter((r) => r.path.startsWith('/rest/v1/rpc/signup_rate_limit_hit'))).toHaveLength(1);
  });

  it('pages in the same order as the SQL store over the same database', async () => {
    const { store, db } = ctx;
    await Promise.all(Array.from({ length: 120 }, (_, i) => addSignup(store, `order${i}@example.com`, null)));
    const sqlStore = await openPostgresStore(db.url, { max: 2 });
    try {
      const walk = async (s: Store) => {
        const ids: string[] = [];
        let after: string | null = null;
        for (;;) {
          const page = await listActiveSubscribers(s, after, 33);
          if (page.length === 0) return ids;
          ids.push(...page.map((p) => p.id));
          after = page[page.length - 1]!.id;
        }
      };
      const viaRest = await walk(store);
      expect(viaRest.length).toBeGreaterThanOrEqual(120);
      expect(viaRest).toEqual(await walk(sqlStore));
      expect((await store.listAllSubscribers(null, 1_000)).map((s) => s.id)).toEqual((await sqlStore.listAllSubscribers(null, 1_000)).map((s) => s.id));
    } finally {
      await sqlStore.close();
    }
  });

  it('is not ready while a migration is missing, and names it', async () => {
    const { store, db } = ctx;
    const admin = createPgClient(db.url, { max: 1 });
    try {
      await admin.query("delete from public.app_migrations where version = '20250801000300'");
      await expect(store.checkReady()).rejects.toThrow(/migrations not applied: 20250801000300;.*npm run db:migrate/);
      await expect(store.checkReady()).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(await migrate(admin)).toEqual(['20250801000300']);
      await expect(store.checkReady()).resolves.toBeUndefined();
    } finally {
      await admin.close();
    }
  });

  it('is not ready on a project that was never migrated', async () => {
    const bare = await createTestDatabase({ from: 'empty' });
    await createSupabaseRoles(bare.url);
    const bareFake = await startFakePostgrest(bare.url);
    const bareStore = await openSupabaseStore({ url: bareFake.url, anonKey: bareFake.anonKey, serviceRoleKey: bareFake.serviceRoleKey });
    try {
      await expect(bareStore.checkReady()).rejects.toThrow(/migrations not applied: 20250201000000, 20250801000000, .*20250801000300/);
    } finally {
      await bareStore.close();
      await bareFake.close();
      await bare.drop();
    }
  });
}

/** A gateway cut off from its database, keys in the wrong variable, and refusals that are not outages. */
function outagesAndRefusals(ctx: SupabaseContext) {
  it('reports a gateway that cannot reach its database (503 PGRST000) as unavailable', async () => {
    const { port } = await closedPortUrl();
    const cutOff = await startFakePostgrest(`postgres://postgres@127.0.0.1:${port}/nothing`);
    const cutOffStore = await openSupabaseStore({ url: cutOff.url, anonKey: cutOff.anonKey, serviceRoleKey: cutOff.serviceRoleKey });
    try {
      const failure = await addSignup(cutOffStore, 'cut-off@example.com', '/').catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(StoreUnavailableError);
      expect((failure as Error).message).toMatch(/PGRST000/);
      await expect(cutOffStore.checkReady()).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await cutOffStore.close();
      await cutOff.close();
    }
  });

  it('refuses keys put in the wrong variable before any request is made', async () => {
    const { fake } = ctx;
    await expect(openSupabaseStore({ url: fake.url, anonKey: fake.serviceRoleKey, serviceRoleKey: fake.serviceRoleKey })).rejects.toThrow(
      /SUPABASE_ANON_KEY holds a service-role/,
    );
    await expect(openSupabaseStore({ url: fake.url, anonKey: fake.anonKey, serviceRoleKey: fake.anonKey })).rejects.toThrow(
      /SUPABASE_SERVICE_ROLE_KEY holds a key for the "anon" role/,
    );
    await expect(openSupabaseStore({ url: fake.url, anonKey: fake.anonKey, serviceRoleKey: unsignedJwt({ role: 'authenticated' }) })).rejects.toThrow(
      /"authenticated" role/,
    );
    await expect(openSupabaseStore({ url: fake.url, anonKey: 'sb_secret_abc', serviceRoleKey: 'sb_secret_def' })).rejects.toThrow(/SUPABASE_ANON_KEY/);
    const newStyle = await openSupabaseStore({ url: fake.url, anonKey: 'sb_publishable_abc', serviceRoleKey: 'sb_secret_def' });
    await newStyle.close();
  });

  it('passes on a refusal that is not an outage as an error naming the code', async () => {
    const { fake } = ctx;
    const invalid = await openSupabaseStore({ url: fake.url, anonKey: fake.anonKey, serviceRoleKey: 'not-a-valid-key' });
    try {
      const failure = await listActiveSubscribers(invalid, null, 10).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SupabaseRequestError);
      expect(failure).toMatchObject({ status: 401, code: 'PGRST301' });
      // A HEAD answer has no body to carry the code; the status still says what happened.
      const counting = await invalid.countSubscribers().catch((error: unknown) => error);
      expect(counting).toBeInstanceOf(SupabaseRequestError);
      expect((counting as Error).message).toMatch(/HTTP 401/);
      // Readiness still fails, with the reason, so a deploy with a wrong key does not go live.
      await expect(invalid.checkReady()).rejects.toThrow(StoreUnavailableError);
      await expect(invalid.checkReady()).rejects.toThrow(/PGRST301/);
    } finally {
      await invalid.close();
    }
  });
}
