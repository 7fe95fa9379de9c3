// Fresh links (download, delete, subscribe again): the token names its purpose, the subscriber,
// the link version and an expiry one hour ahead, and is refused when altered, forged, expired or
// made for another purpose; the store lets each link act once, and not after the address changed
// state or was deleted. The store part on all three backends, with the import's function.
import { describe, expect, it } from 'vitest';
import { createFreshLinkToken, FRESH_LINK_MINUTES, maskEmail, newFreshLink, verifyFreshLinkToken, type FreshLink, type LinkPurpose } from '../../server/subscribers/link-tokens.ts';
import type { Store } from '../../server/store/types.ts';
import { createConfirmToken, createUnsubscribeToken, verifyConfirmToken, verifyUnsubscribeToken } from '../../server/subscribers/signed-links.ts';
import { openAroundTests, storeBackends } from '../support/store-backends.ts';
import { addSignup } from '../support/store-ops.ts';

const SECRET = 'fresh-link-secret-0123456789abcdef0123456789';
const OLD_SECRET = 'fresh-link-old-secret-0123456789abcdef012345';
const ID = '5b0e6c1e-aaaa-4000-8000-000000000001';
const MINUTE = 60 * 1000;

const make = (purpose: LinkPurpose, id: string, version: number, now: Date, secret: string) =>
  createFreshLinkToken({ purpose, subscriberId: id, version, ...newFreshLink(now) }, secret);

describe('fresh-link tokens', () => {
  const made = new Date('2026-03-02T10:00:00Z');
  const token = make('delete', ID, 3, made, SECRET);

  it('name purpose, subscriber, version and an expiry one hour ahead, with a fresh nonce each time', () => {
    expect(FRESH_LINK_MINUTES).toBe(60);
    expect(token).not.toContain('@');
    const checked = verifyFreshLinkToken(token, new Date(made.getTime() + 59 * MINUTE), SECRET);
    expect(checked).toMatchObject({ ok: true, link: { purpose: 'delete', subscriberId: ID, version: 3, expiresAt: new Date(made.getTime() + 60 * MINUTE) } });
    const other = make('delete', ID, 3, made, SECRET);
    expect(other).not.toBe(token);
    expect((verifyFreshLinkToken(other, made, SECRET) as { link: FreshLink }).link.nonce).not.toBe((checked as { link: FreshLink }).link.nonce);
    expect(verifyFreshLinkToken(token, new Date(made.getTime() + 60 * MINUTE), SECRET)).toMatchObject({ ok: false, reason: 'expired' });
    // A link made before UNSUBSCRIBE_SECRET was rotated still works within its hour.
    expect(verifyFreshLinkToken(token, made, 'a-new-secret-0123456789abcdef0123456789', [SECRET])).toMatchObject({ ok: true });
  });

  it('are refused when altered, truncated, forged, or made for unsubscribing or confirming; and pass for neither', () => {
    const [format, purpose, id, version, expires, nonce, mac] = token.split('.') as string[];
    const later = (parseInt(expires!, 36) + 86_400).toString(36);
    for (const bad of [
      [format, 'download', id, version, expires, nonce, mac].join('.'),
      [format, purpose, Buffer.from('another-id').toString('base64url'), version, expires, nonce, mac].join('.'),
      [format, purpose, id, '4', expires, nonce, mac].join('.'),
      [format, purpose, id, version, later, nonce, mac].join('.'),
      [format, purpose, id, version, expires, 'A'.repeat(22), mac].join('.'),
      [format, 'unsubscribe', id, version, expires, nonce, mac].join('.'),
      token.slice(0, -1),
      make('delete', ID, 3, made, OLD_SECRET),
      createUnsubscribeToken(ID, SECRET),
      createConfirmToken(ID, made, SECRET),
      '',
      'x'.repeat(600),
    ]) {
      expect(verifyFreshLinkToken(bad, made, SECRET), bad).toEqual({ ok: false, reason: 'invalid' });
    }
    expect(verifyUnsubscribeToken(token, SECRET)).toBeNull();
    expect(verifyConfirmToken(token, made, SECRET)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('mask the address as r•••@example.org', () => {
    expect(maskEmail('reader@example.org')).toBe('r•••@example.org');
    expect(maskEmail('r@example.org')).toBe('r•••@example.org');
  });
});

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`fresh links in the store on ${backend.name}`, () => {
    let store: Store;
    openAroundTests(backend, (opened) => (store = opened.store), { eachTest: true });

    const linkFor = async (email: string, nonce: string) => {
      const { id } = (await store.findSubscriberByEmail(email))!;
      const target = (await store.linkTarget(id))!;
      return { subscriberId: id, version: target.linkVersion, nonce, expiresAt: new Date(Date.now() + 60 * MINUTE) };
    };

    it('acts once, and not after a change of state or a delete', async () => {
      await addSignup(store, 'ada@example.org', '/');
      const first = await linkFor('ada@example.org', 'nonce-1');
      expect(await store.linkTarget(first.subscriberId)).toEqual({ email: 'ada@example.org', status: 'active', linkVersion: first.version });
      expect(await store.linkState(first)).toBe('ok');
      expect(await store.useLink(first)).toBe('ok');
      expect(await store.useLink(first)).toBe('used');
      expect(await store.linkState(first)).toBe('used');

      // Made before the address unsubscribed: it no longer acts.
      const before = await linkFor('ada@example.org', 'nonce-2');
      await store.removeSubscriber(before.subscriberId, 'unsubscribed');
      expect(await store.linkState(before)).toBe('revoked');
      expect(await store.useLink(before)).toBe('revoked');
      const after = await linkFor('ada@example.org', 'nonce-3');
      expect(after.version).toBeGreaterThan(before.version);
      expect(await store.linkState(after)).toBe('ok');

      const deleting = await linkFor('ada@example.org', 'nonce-4');
      expect(await store.deleteSubscriberByLink(deleting, 'hash')).toEqual({ outcome: 'ok', status: 'unsubscribed' });
      expect(await store.deleteSubscriberByLink(deleting, 'hash')).toEqual({ outcome: 'gone', status: null });
      expect(await store.linkState(after)).toBe('gone');
      expect(await store.linkTarget(after.subscriberId)).toBeNull();
    });

    it('a used delete link deletes nothing', async () => {
      await addSignup(store, 'bea@example.org', '/');
      const link = await linkFor('bea@example.org', 'nonce-5');
      expect(await store.useLink(link)).toBe('ok');
      expect(await store.deleteSubscriberByLink(link, 'hash')).toEqual({ outcome: 'used', status: null });
      expect((await store.findSubscriberByEmail('bea@example.org'))?.status).toBe('active');
    });
  });
}

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`the import function on ${backend.name}`, () => {
    let store: Store;
    openAroundTests(backend, (opened) => (store = opened.store), { eachTest: true });

    it('brings each row to its final state, never reactivates anyone, applies a stricter leaving, and counts each outcome', async () => {
      await addSignup(store, 'active@example.org', '/');
      await addSignup(store, 'left@example.org', '/');
      await store.removeSubscriber((await store.findSubscriberByEmail('left@example.org'))!.id, 'unsubscribed');
      const row = (email: string, state: 'active' | 'pending' | 'unsubscribed' | 'bounced' | 'complained', addressHashes: string[] = []) => ({ email, state, addressHashes });
      const counts = await store.importSubscribers([
        row('new@example.org', 'active'),
        row('new.pending@example.org', 'pending'),
        row('new.complained@example.org', 'complained'),
        row('active@example.org', 'bounced'),
        row('left@example.org', 'active'),
        row('new@example.org', 'active'),
      ]);
      expect(counts).toEqual({ added: 2, recordedLeft: 2, present: 1, leftAlone: 1 });
      const states = await Promise.all(
        ['new', 'new.pending', 'new.complained', 'active', 'left'].map(async (name) => (await store.findSubscriberByEmail(`${name}@example.org`))?.status),
      );
      expect(states).toEqual(['active', 'pending', 'complained', 'bounced', 'unsubscribed']);
      expect(await store.importSubscribers([])).toEqual({ added: 0, recordedLeft: 0, present: 0, leftAlone: 0 });
    });
  });
}
