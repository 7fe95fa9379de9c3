// Owner links as every backend must keep them (PGlite, PostgreSQL, the Supabase REST
// store): a confirmation acts only for the link version it was mailed with (a link mailed before
// versions, only on a pending row), and the owner's "Subscribe again" in double mode always queues
// a confirmation for an address that confirmed before, and for one that never did only past the
// 24-hour throttles, changing nothing when throttled.
import { describe, expect, it } from 'vitest';
import type { SignupRequest, Store } from '../../server/store/types.ts';
import { openAroundTests, storeBackends } from '../support/store-backends.ts';

const double = (email: string, mailbox: string): SignupRequest => ({ email, source: '/', mode: 'double', networkHash: 'net', addressHashes: [mailbox] });

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`Owner links on ${backend.name}`, () => {
    let store: Store;
    openAroundTests(backend, (opened) => (store = opened.store));

    /** The confirmations queued since the last call, as the outbox worker claims them. */
    const claimedConfirmations = async () => (await store.claimMail(100, 60)).filter((message) => message.kind === 'confirm');
    const version = async (id: string) => (await store.linkTarget(id))!.linkVersion;

    it('a confirmation is mailed with the row’s link version, and acts only for it', async () => {
      const { subscriberId: id, outcome } = await store.signUp(double('vera@example.com', 'mailbox-vera'));
      expect(outcome).toBe('send_confirmation');
      const [mailed] = await claimedConfirmations();
      expect(mailed).toMatchObject({ subscriberId: id, payload: { version: await version(id) } });
      const mailedVersion = mailed!.payload.version as number;

      await store.removeSubscriber(id, 'complained');
      expect(await store.confirmByLink(id, mailedVersion, 'net', false)).toEqual({ email: 'vera@example.com', status: 'complained', activated: false, refused: true });
      // A link mailed before versions: only a pending row.
      expect(await store.confirmByLink(id, undefined, 'net', false)).toMatchObject({ status: 'complained', activated: false, refused: true });
      expect((await store.findSubscriber(id))?.status).toBe('complained');
      // The owner's new confirmation, mailed after the complaint, brings it back.
      expect(await store.confirmByLink(id, await version(id), 'net', false)).toEqual({ email: 'vera@example.com', status: 'active', activated: true, refused: false });
      // An active row: already confirmed, whatever the link.
      expect(await store.confirmByLink(id, mailedVersion, 'net', false)).toEqual({ email: 'vera@example.com', status: 'active', activated: false, refused: false });
      expect(await store.confirmByLink('00000000-0000-4000-8000-000000000000', 1, 'net', false)).toBeNull();
    });

    it('a link mailed before versions still confirms a pending row', async () => {
      const { subscriberId: id } = await store.signUp(double('legacy@example.com', 'mailbox-legacy'));
      await claimedConfirmations();
      expect(await store.confirmByLink(id, undefined, 'net', false)).toMatchObject({ status: 'active', activated: true, refused: false });
    });

    it('“Subscribe again” by an owner who confirmed before queues a confirmation within the 24 hours, and claims the mailbox’s throttle', async () => {
      const { subscriberId: id } = await store.signUp(double('owen@example.com', 'mailbox-owen'));
      await claimedConfirmations();
      await store.confirmByLink(id, await version(id), 'net', false);
      await store.removeSubscriber(id, 'unsubscribed');

      expect(await store.resubscribeByOwner(id, 'net-2', 'mailbox-owen')).toEqual({ outcome: 'sent', status: 'pending' });
      expect((await store.findSubscriber(id))?.status).toBe('pending');
      const [mailed] = await claimedConfirmations();
      expect(mailed).toMatchObject({ subscriberId: id, payload: { version: await version(id) } });
      // Pressed again while pending: the owner is still not throttled out.
      expect(await store.resubscribeByOwner(id, 'net-2', 'mailbox-owen')).toEqual({ outcome: 'sent', status: 'pending' });
      expect(await claimedConfirmations()).toHaveLength(1);
      // A stranger's signup of another spelling of that mailbox the same day sends nothing.
      expect((await store.signUp(double('o.wen@example.com', 'mailbox-owen'))).outcome).toBe('nothing_to_send');
    });

    it('an address that never confirmed waits out the throttle, and a throttled ask changes nothing', async () => {
      const { subscriberId: id } = await store.signUp(double('nora@example.com', 'mailbox-nora'));
      await claimedConfirmations();
      await store.removeSubscriber(id, 'unsubscribed');
      const before = await version(id);
      expect(await store.resubscribeByOwner(id, 'net', 'mailbox-nora')).toEqual({ outcome: 'throttled', status: 'unsubscribed' });
      expect(await version(id)).toBe(before);
      expect((await store.findSubscriber(id))?.status).toBe('unsubscribed');
      expect(await claimedConfirmations()).toEqual([]);
    });

    it('leaves an active, bounced or complained row to its own rules, and answers null for no row', async () => {
      const { subscriberId: id } = await store.signUp(double('ann@example.com', 'mailbox-ann'));
      await claimedConfirmations();
      await store.confirmByLink(id, await version(id), 'net', false);
      expect(await store.resubscribeByOwner(id, 'net', 'mailbox-ann')).toEqual({ outcome: 'unchanged', status: 'active' });
      await store.removeSubscriber(id, 'bounced');
      expect(await store.resubscribeByOwner(id, 'net', 'mailbox-ann')).toEqual({ outcome: 'unchanged', status: 'bounced' });
      expect(await claimedConfirmations()).toEqual([]);
      expect(await store.resubscribeByOwner('00000000-0000-4000-8000-000000000000', 'net', 'mailbox-x')).toBeNull();
    });
  });
}
