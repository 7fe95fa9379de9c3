// The whole Store over named SQL functions: every topic module's operations on one CallFunction,
// plus what only the backend knows (its name, readiness, shutdown). The SQL and Supabase stores
// differ in nothing else.
import type { CallFunction } from './call-function.ts';
import { digestBatchStore } from './digest-batches.ts';
import { digestLeaseStore } from './digest-lease.ts';
import { engagementStore } from './engagement.ts';
import { mailOutboxStore } from './mail-outbox.ts';
import { mailboxKeyStore } from './mailbox-keys.ts';
import { metricsStore } from './metrics.ts';
import { noticeWebhookStore } from './notice-webhooks.ts';
import { pendingSignupStore } from './pending-signups.ts';
import { retentionStore } from './retention.ts';
import { rateLimitStore } from './rate-limit-counters.ts';
import { serverNoticeStore } from './server-notices.ts';
import { referralStore } from './referrals.ts';
import { reportStore } from './report-types.ts';
import { subscriberImportStore } from './subscriber-import.ts';
import { subscriberLinkStore } from './subscriber-links.ts';
import { subscriberStore } from './subscribers.ts';
import type { Store, StoreTransport } from './types.ts';

const functionsOf = new WeakMap<Store, CallFunction>();

export interface Backend extends StoreTransport {
  call: CallFunction;
}

export function storeOver({ call, backend, checkReady, close }: Backend): Store {
  const store: Store = {
    backend,
    checkReady,
    close,
    ...subscriberStore(call),
    ...mailboxKeyStore(call),
    ...pendingSignupStore(call),
    ...retentionStore(call),
    ...digestBatchStore(call),
    ...digestLeaseStore(call),
    ...rateLimitStore(call),
    ...reportStore(call),
    ...engagementStore(call),
    ...serverNoticeStore(call),
    ...mailOutboxStore(call),
    ...subscriberLinkStore(call),
    ...subscriberImportStore(call),
    ...metricsStore(call),
    ...noticeWebhookStore(call),
    ...referralStore(call),
  };
  functionsOf.set(store, call);
  return store;
}

/** The function caller behind a store, for tests/support's ledger helpers; undefined for any other object. */
export function storeFunctions(store: Store): CallFunction | undefined {
  return functionsOf.get(store);
}
