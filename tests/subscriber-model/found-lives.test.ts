// Lives the generated test found failing, each shrunk to its shortest sequence of events and kept
// here as an ordinary regression test, on PGlite from the seed and PostgreSQL. Each names the rule
// of server/subscribers/lifecycle.ts it broke.
import { describe, it } from 'vitest';
import { Bounce, ConfirmedReader, Footer, LegacySpelling, OneClick, Operator, PressLink, ProviderReport, runLife, Signup } from './life.ts';
import { lifeSystemFor, modelStores } from './stores.ts';

for (const store of modelStores) {
  describe.skipIf(!store.available)(`lives found failing, on ${store.name}`, () => {
    const system = lifeSystemFor(store.open);

    it('a complaint for a mailbox with no row suppresses it: a later signup mails nothing', async () => {
      await runLife(system(), 'single', [new ProviderReport(0, 0, 'email.complained'), new Signup(0, 0)]);
    });

    it('a bounce of a spelling nobody confirmed or used leaves an active reader active', async () => {
      await runLife(system(), 'single', [new Signup(0, 0), new Bounce(0, 1)]);
    });

    it('Subscribe again on a forwarded footer link leaves an unsubscribed reader unsubscribed (double mode)', async () => {
      await runLife(system(), 'double', [new ConfirmedReader(0, 0, true), new Footer(0, 'resubscribe')]);
    });

    it('a forwarded footer link causes at most a few e-mails to the mailbox however often it is pressed', async () => {
      await runLife(system(), 'single', [new ConfirmedReader(1, 0, false), new Footer(1, 'download', 4)]);
    });

    it('a one-click unsubscribe mailed to a spelling before the merge unsubscribes the mailbox after it', async () => {
      await runLife(system(), 'single', [new Signup(0, 0), new LegacySpelling(0, 2), new OneClick(0, true)]);
    });

    it('the data download holds every merged spelling', async () => {
      await runLife(system(), 'single', [new Signup(0, 0), new LegacySpelling(0, 1), new Footer(0, 'download'), new PressLink(0, 'link')]);
    });

    it("the owner's own spelling signing up after a bounce of one nobody confirmed is mailed a confirmation while the mailbox stays suppressed", async () => {
      await runLife(system(), 'single', [new Signup(0, 0), new Bounce(0, 0), new Signup(0, 1)]);
    });

    it("a signup over the mailbox's daily limit changes nothing, and double mode answers it as any other", async () => {
      await runLife(system(), 'double', [new Signup(0, 0), new ConfirmedReader(0, 0, false), new ConfirmedReader(0, 0, true), new ConfirmedReader(0, 0, false)]);
    });

    it('the pending prune leaves a reader who once confirmed, unsubscribed and signed up again unconfirmed', async () => {
      await runLife(system(), 'double', [new ConfirmedReader(1, 0, true), new ConfirmedReader(1, 0, false), new Operator(1, 0, 'pending-prune')]);
    });

    it('a delete leaves no merged spelling behind', async () => {
      await runLife(system(), 'single', [new Signup(0, 0), new LegacySpelling(0, 1), new Operator(0, 0, 'operator-delete')]);
    });
  });
}
