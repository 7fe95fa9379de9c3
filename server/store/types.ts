// The one storage interface the server and the job depend on. Three backends implement it:
// PGlite (embedded default), Postgres (DATABASE_URL) and Supabase (REST with the project's keys).
import type { ReportStore } from './report-types.ts';

export type SignupResult = 'subscribed' | 'already_subscribed';

export type RemovalReason = 'unsubscribed' | 'bounced' | 'complained';

export interface Subscriber {
  id: string;
  email: string;
}

export interface SubscriberRecord extends Subscriber {
  active: boolean;
  createdAt: Date;
}

export interface SubscriberCounts {
  active: number;
  inactive: number;
}

export interface Delivery {
  subscriberId: string;
  providerMessageId: string | null;
}

export interface Store extends ReportStore {
  readonly backend: 'pglite' | 'postgres' | 'supabase';

  /**
   * Adds an address (already normalised and validated). A new address or one that had left
   * becomes an active subscriber; an active duplicate is reported, detected by the database's
   * unique key, never by a read before the write.
   */
  addSignup(email: string, source: string | null): Promise<SignupResult>;

  findSubscriber(id: string): Promise<SubscriberRecord | null>;
  findSubscriberByEmail(email: string): Promise<SubscriberRecord | null>;

  /** Marks a subscriber as gone. Returns false when there is no such subscriber. Idempotent. */
  removeSubscriber(id: string, reason: RemovalReason): Promise<boolean>;

  /** Active subscribers in a stable order (by id), `limit` at a time after `afterId`. */
  listActiveSubscribers(afterId: string | null, limit: number): Promise<Subscriber[]>;

  /** Every subscriber (active or not) in id order, for export. */
  listAllSubscribers(afterId: string | null, limit: number): Promise<SubscriberRecord[]>;

  countSubscribers(): Promise<SubscriberCounts>;

  /** Of the given subscribers, those that already have a delivery for this recap. */
  deliveredTo(recapDate: string, subscriberIds: readonly string[]): Promise<Set<string>>;

  /** Records accepted messages; an existing row for the same recap and subscriber is kept. */
  recordDeliveries(recapDate: string, deliveries: readonly Delivery[]): Promise<void>;

  countDeliveries(recapDate: string): Promise<number>;

  /**
   * Takes or renews the sending lease for a recap. Returns false while another holder's lease
   * is still valid. A lease that is not renewed expires after `leaseMs`.
   */
  acquireDigestLock(recapDate: string, holder: string, leaseMs: number): Promise<boolean>;
  releaseDigestLock(recapDate: string, holder: string): Promise<void>;

  /** Throws StoreUnavailableError unless the store answers and its migrations are applied. */
  checkReady(): Promise<void>;

  close(): Promise<void>;
}

/** The store cannot be reached or answered with a failure that is not the caller's fault. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** Another process already owns the embedded database. */
export class StoreLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreLockedError';
  }
}
