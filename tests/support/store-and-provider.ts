// A store backend and the Resend stand-in with the real SDK pointed at it: what every outbox test
// sends through. Call inside a describe block: the pieces are opened before its tests and closed
// after, and the returned object's fields are filled in by then.
import { afterAll, beforeAll } from 'vitest';
import { ResendMailer } from '../../server/mail/resend.ts';
import { OUTBOX_DELIVERY_POLICY } from '../../server/mail/outbox-worker.ts';
import type { Store } from '../../server/store/types.ts';
import { startFakeResend, type FakeResend } from './fake-resend.ts';
import type { OpenedBackend, StoreBackend } from './store-backends.ts';
import { addSignup } from './store-ops.ts';

export interface StoreAndProvider {
  store: Store;
  fake: FakeResend;
  /** The outbox's delivery policy with its back-off shortened to milliseconds. */
  mailer: ResendMailer;
}

/** Opens the store, with `readers` subscribed (single mode, source '/'), and the provider around the calling describe's tests. */
export function useStoreAndProvider(backend: StoreBackend, { readers = [] }: { readers?: readonly string[] } = {}): StoreAndProvider {
  const pieces = {} as StoreAndProvider;
  let opened: OpenedBackend | undefined;
  beforeAll(async () => {
    opened = await backend.open();
    pieces.store = opened.store;
    for (const email of readers) await addSignup(pieces.store, email, '/');
    pieces.fake = await startFakeResend();
    pieces.mailer = new ResendMailer({
      apiKey: 're_test',
      baseUrl: pieces.fake.url,
      from: 'Launched Weekly <news@launched.test>',
      policy: { ...OUTBOX_DELIVERY_POLICY, baseDelayMs: 10, maxDelayMs: 20 },
    });
  }, 120_000);
  afterAll(async () => {
    await pieces.fake?.close();
    await opened?.cleanup();
  });
  return pieces;
}
