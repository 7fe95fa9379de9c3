// DESIGN.md's subscriber states, as every backend must keep them: who may move an address from
// one state to another, and that no signup (in either mode, alone or group-committed) can bring
// back an address that bounced or complained.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignupRequest, Store } from '../../server/store/types.ts';
import { storeBackends, type OpenedBackend } from '../support/store-backends.ts';
import { claimWelcome, deliveredTo, listActiveSubscribers, recordDeliveries, releaseConfirmation } from '../support/store-ops.ts';

const single = (email: string, extra: Partial<SignupRequest> = {}): SignupRequest => ({
  email,
  source: '/',
  mode: 'single',
  networkHash: 'net-hash-1',
  addressHashes: [],
  ...extra,
});
const double = (email: string, extra: Partial<SignupRequest> = {}): SignupRequest => single(email, { mode: 'double', ...extra });

async function activeEmails(store: Store): Promise<string[]> {
  return (await listActiveSubscribers(store, null, 10_000)).map((s) => s.email);
}

async function statusOf(store: Store, email: string) {
  return (await store.findSubscriberByEmail(email))?.status ?? null;
}

/** What every test of one backend works on: the backend opened once, before its tests. */
interface Ctx {
  opened: OpenedBackend;
  store: Store;
}

/** How an address becomes pending or active, in either signup mode. */
function signupModes(ctx: Ctx) {
  it('double mode: a new address waits as pending, gets one confirmation per 24 h, and is active only once confirmed', async () => {
    const first = await ctx.store.signUp(double('dora@example.com'));
    expect(first.outcome).toBe('send_confirmation');
    expect(await statusOf(ctx.store, 'dora@example.com')).toBe('pending');
    expect(await activeEmails(ctx.store)).not.toContain('dora@example.com');
    // Asked again, by anyone: the same record, no second e-mail within the day.
    expect(await ctx.store.signUp(double('dora@example.com', { networkHash: 'another-network' }))).toEqual({ outcome: 'nothing_to_send', subscriberId: first.subscriberId });

    const confirmed = await ctx.store.activateSubscriber(first.subscriberId, 'confirmation', 'net-hash-confirm');
    expect(confirmed).toEqual({ email: 'dora@example.com', status: 'active', activated: true });
    expect(await activeEmails(ctx.store)).toContain('dora@example.com');
    // Pressed twice: nothing more happens.
    expect(await ctx.store.activateSubscriber(first.subscriberId, 'confirmation', 'net-hash-confirm')).toEqual({ email: 'dora@example.com', status: 'active', activated: false });
    // An active address signing up again in double mode: told nothing, sent nothing.
    expect((await ctx.store.signUp(double('dora@example.com'))).outcome).toBe('nothing_to_send');

    const details = (await ctx.store.subscriberDetails(first.subscriberId))!;
    expect(details).toMatchObject({ status: 'active', source: '/', signupNetworkHash: 'net-hash-1', confirmNetworkHash: 'net-hash-confirm' });
    expect(details.confirmedAt).toBeInstanceOf(Date);
  });

  it('single mode: new → active, active → already subscribed, unsubscribed → active again; a pending address is activated', async () => {
    expect((await ctx.store.signUp(single('sam@example.com'))).outcome).toBe('subscribed');
    expect((await ctx.store.signUp(single('sam@example.com'))).outcome).toBe('already_subscribed');
    const { id } = (await ctx.store.findSubscriberByEmail('sam@example.com'))!;
    await ctx.store.removeSubscriber(id, 'unsubscribed');
    expect(await statusOf(ctx.store, 'sam@example.com')).toBe('unsubscribed');
    expect((await ctx.store.signUp(single('sam@example.com', { source: '/archive' }))).outcome).toBe('subscribed');
    expect((await ctx.store.subscriberDetails(id))!).toMatchObject({ status: 'active', source: '/archive', leftAt: null });

    await ctx.store.signUp(double('switch@example.com'));
    expect((await ctx.store.signUp(single('switch@example.com'))).outcome).toBe('subscribed');
    expect(await statusOf(ctx.store, 'switch@example.com')).toBe('active');
  });

  it('double mode: an address that unsubscribed goes back to pending with a confirmation e-mail', async () => {
    await ctx.store.signUp(single('back@example.com'));
    const { id } = (await ctx.store.findSubscriberByEmail('back@example.com'))!;
    await ctx.store.removeSubscriber(id, 'unsubscribed');
    expect(await ctx.store.signUp(double('back@example.com'))).toEqual({ outcome: 'send_confirmation', subscriberId: id });
    expect(await statusOf(ctx.store, 'back@example.com')).toBe('pending');
  });
}

/** How an address leaves (unsubscribed, bounced, complained, deleted), and that no signup brings it back. */
function leavingForGood(ctx: Ctx) {
  for (const reason of ['complained', 'bounced'] as const) {
    // A bounced address may be sent one confirmation a month; a complained one none, unless its owner asks from their own page.
    it(`keeps a ${reason} address suppressed through signups in either mode, with ${reason === 'complained' ? 'no confirmation unless its owner asks' : 'at most one confirmation per 30 days'}`, async () => {
      const email = `${reason}.reader@example.com`;
      await ctx.store.signUp(single(email));
      const { id } = (await ctx.store.findSubscriberByEmail(email))!;
      await ctx.store.removeSubscriber(id, reason);

      const decisions = [];
      for (const request of [single(email), double(email), single(email), double(email)]) decisions.push(await ctx.store.signUp(request));
      // Many signups in one moment, this address among them.
      const together = await Promise.all([...Array.from({ length: 20 }, (_, i) => single(`crowd${i}.${reason}@example.com`)), single(email)].map((r) => ctx.store.signUp(r)));
      decisions.push(together.at(-1)!);

      const first = reason === 'complained' ? 'nothing_to_send' : 'send_confirmation';
      expect(decisions.map((d) => d.outcome)).toEqual([first, 'nothing_to_send', 'nothing_to_send', 'nothing_to_send', 'nothing_to_send']);
      if (reason === 'complained') expect((await ctx.store.signUp({ ...double(email), owner: true })).outcome).toBe('send_confirmation');
      expect(decisions.every((d) => d.subscriberId === id)).toBe(true);
      expect(await statusOf(ctx.store, email)).toBe(reason);
      expect(await activeEmails(ctx.store)).not.toContain(email);
      // Only the owner's own confirmation brings it back; their page's "subscribe again" does not.
      expect(await ctx.store.activateSubscriber(id, 'resubscribe', null)).toEqual({ email, status: reason, activated: false });
      expect(await ctx.store.activateSubscriber(id, 'confirmation', 'owner-net')).toEqual({ email, status: 'active', activated: true });
    });
  }

  it('keeps the stricter state when an address leaves twice (complained > bounced > unsubscribed)', async () => {
    await ctx.store.signUp(single('twice@example.com'));
    const { id } = (await ctx.store.findSubscriberByEmail('twice@example.com'))!;
    await ctx.store.removeSubscriber(id, 'unsubscribed');
    const leftAt = (await ctx.store.subscriberDetails(id))!.leftAt;
    await ctx.store.removeSubscriber(id, 'complained');
    await ctx.store.removeSubscriber(id, 'bounced');
    await ctx.store.removeSubscriber(id, 'unsubscribed');
    const details = (await ctx.store.subscriberDetails(id))!;
    expect(details.status).toBe('complained');
    expect(details.leftAt).toEqual(leftAt);
  });

  it('deletes a subscriber with its ledger rows, keeping only a keyed hash when it had complained', async () => {
    await ctx.store.signUp(single('gone@example.com'));
    const { id } = (await ctx.store.findSubscriberByEmail('gone@example.com'))!;
    await recordDeliveries(ctx.store, '2025-07-14', [{ subscriberId: id, providerMessageId: 'm-1' }]);
    expect((await ctx.store.subscriberDetails(id))!.deliveries).toEqual([{ recapDate: '2025-07-14', sentAt: expect.any(Date) }]);
    await ctx.store.removeSubscriber(id, 'complained');

    expect(await ctx.store.deleteSubscriber(id, 'hash-of-gone')).toBe('complained');
    expect(await ctx.store.findSubscriber(id)).toBeNull();
    expect(await deliveredTo(ctx.store, '2025-07-14', [id])).toEqual(new Set());
    expect(await ctx.store.deleteSubscriber(id, 'hash-of-gone')).toBeNull();

    // A bot re-adding it, in single mode, alone or in a crowd: it stays suppressed.
    const back = await Promise.all([single('gone@example.com', { addressHashes: ['hash-of-gone'] }), single('crowd.gone@example.com')].map((r) => ctx.store.signUp(r)));
    expect(back[0]!.outcome).toBe('nothing_to_send');
    expect(await statusOf(ctx.store, 'gone@example.com')).toBe('complained');
    expect(await activeEmails(ctx.store)).not.toContain('gone@example.com');

    // An active subscriber's deletion leaves nothing behind: signing up later is a fresh start.
    await ctx.store.signUp(single('fresh@example.com'));
    const fresh = (await ctx.store.findSubscriberByEmail('fresh@example.com'))!;
    expect(await ctx.store.deleteSubscriber(fresh.id, 'hash-of-fresh')).toBe('active');
    expect((await ctx.store.signUp(single('fresh@example.com', { addressHashes: ['hash-of-fresh'] }))).outcome).toBe('subscribed');
  });
}

/** Pending signups' clean-up, the confirmation throttles, and finding an address by its keys. */
function housekeepingAndThrottles(ctx: Ctx) {
  it('removes pending signups older than the limit and nothing else', async () => {
    await ctx.store.signUp(double('waiting@example.com'));
    await ctx.store.signUp(single('staying@example.com'));
    expect(await ctx.store.prunePending(30)).toBe(0);
    expect(await statusOf(ctx.store, 'waiting@example.com')).toBe('pending');
    // Zero days: every pending signup made before now counts as old.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await ctx.store.prunePending(0)).toBeGreaterThanOrEqual(1);
    expect(await statusOf(ctx.store, 'waiting@example.com')).toBeNull();
    expect(await statusOf(ctx.store, 'staying@example.com')).toBe('active');
  });

  it('gives the confirmation throttle back when the e-mail could not be sent', async () => {
    const first = await ctx.store.signUp(double('unlucky@example.com'));
    expect(first.outcome).toBe('send_confirmation');
    expect((await ctx.store.signUp(double('unlucky@example.com'))).outcome).toBe('nothing_to_send');
    await releaseConfirmation(ctx.store, first.subscriberId);
    expect((await ctx.store.signUp(double('unlucky@example.com'))).outcome).toBe('send_confirmation');
  });

  it('throttles confirmations per mailbox: spellings sharing a mailbox hash get one a day, and a failed send gives it back', async () => {
    // The first hash is the mailbox's (server/subscribers/subscriber-keys.ts); these spellings share it.
    const mailbox = { addressHashes: ['hash-of-mailbox-sam', 'old-hash-of-this-spelling'] };
    const decisions = await Promise.all(['sam@example.org', 'sam+1@example.org', 'sam+2@example.org'].map((email) => ctx.store.signUp(double(email, mailbox))));
    expect(decisions.map((d) => d.outcome).sort()).toEqual(['nothing_to_send', 'nothing_to_send', 'send_confirmation']);
    expect(await Promise.all(['sam@example.org', 'sam+1@example.org', 'sam+2@example.org'].map((email) => statusOf(ctx.store, email)))).toEqual(['pending', 'pending', 'pending']);
    // Another mailbox is not held up.
    expect((await ctx.store.signUp(double('pat+1@example.org', { addressHashes: ['hash-of-mailbox-pat'] }))).outcome).toBe('send_confirmation');

    const sent = decisions.find((d) => d.outcome === 'send_confirmation')!;
    await releaseConfirmation(ctx.store, sent.subscriberId, 'hash-of-mailbox-sam');
    expect((await ctx.store.signUp(double('sam+3@example.org', mailbox))).outcome).toBe('send_confirmation');
    expect((await ctx.store.signUp(double('sam+4@example.org', mailbox))).outcome).toBe('nothing_to_send');
  });

  it('finds a suppressed address by an older hash and keys it to its mailbox, so other spellings stay suppressed', async () => {
    await ctx.store.signUp(single('lee@example.org'));
    const lee = (await ctx.store.findSubscriberByEmail('lee@example.org'))!;
    await ctx.store.removeSubscriber(lee.id, 'complained');
    // Deleted before mailbox hashes: the list holds only the hash of the exact address.
    expect(await ctx.store.deleteSubscriber(lee.id, 'old-hash-of-lee')).toBe('complained');

    expect((await ctx.store.signUp(single('lee@example.org', { addressHashes: ['hash-of-mailbox-lee', 'old-hash-of-lee'] }))).outcome).toBe('nothing_to_send');
    expect(await statusOf(ctx.store, 'lee@example.org')).toBe('complained');
    // Another spelling, whose older hash was never on the list: the mailbox hash finds it.
    const other = await ctx.store.signUp(single('lee+x@example.org', { addressHashes: ['hash-of-mailbox-lee', 'old-hash-of-lee+x'] }));
    expect(other.outcome).not.toBe('subscribed');
    expect(await statusOf(ctx.store, 'lee+x@example.org')).toBe('complained');
    expect(await activeEmails(ctx.store)).not.toContain('lee+x@example.org');
  });

  it('claims the welcome e-mail once per address, and only while active', async () => {
    const { subscriberId } = await ctx.store.signUp(double('welcome@example.com'));
    expect(await claimWelcome(ctx.store, subscriberId)).toBe(false);
    await ctx.store.activateSubscriber(subscriberId, 'confirmation', null);
    const claims = await Promise.all([claimWelcome(ctx.store, subscriberId), claimWelcome(ctx.store, subscriberId), claimWelcome(ctx.store, subscriberId)]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(await claimWelcome(ctx.store, subscriberId)).toBe(false);
  });

  it('stores and finds an address written in capitals by another writer in its normalised form', async () => {
    await ctx.opened.sql!.query(`insert into public.email_signups (email, source) values ('  Mixed.Case@Example.COM ', null)`);
    const found = await ctx.store.findSubscriberByEmail('Mixed.Case@example.com');
    expect(found).toMatchObject({ email: 'mixed.case@example.com', status: 'active' });
  });
}

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`Subscriber states on ${backend.name}`, () => {
    const ctx = {} as Ctx;

    beforeAll(async () => {
      ctx.opened = await backend.open();
      ctx.store = ctx.opened.store;
    });

    afterAll(async () => {
      await ctx.opened?.cleanup();
    });

    signupModes(ctx);
    leavingForGood(ctx);
    housekeepingAndThrottles(ctx);
  });
}
