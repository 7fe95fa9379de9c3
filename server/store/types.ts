// The one storage interface the server and the job depend on. Three backends implement it:
// PGlite (embedded default), Postgres (DATABASE_URL) and Supabase (REST with the project's keys).
import type { PendingSignupStore } from './pending-signups.ts';
import type { RateLimitCount, RateLimitCounters } from './rate-limit-counters.ts';

export type { RateLimitCount, RateLimitCounters } from './rate-limit-counters.ts';
import type { ReferralStore } from './referrals.ts';
import type { ReportStore } from './report-types.ts';
import type { RetentionStore } from './retention.ts';
import type { EngagementStore } from './engagement.ts';
import type { MailOutboxStore, QueuedNotice } from './mail-outbox.ts';
import type { MetricsStore } from './metrics.ts';
import type { NoticeWebhookStore } from './notice-webhooks.ts';
import type { ServerNoticeStore } from './server-notices.ts';
import type { SubscriberImportStore } from './subscriber-import.ts';
import type { SubscriberLinkStore } from './subscriber-links.ts';

export type RemovalReason = 'unsubscribed' | 'bounced' | 'complained';

/** DESIGN.md's subscriber states. Only `active` receives the digest. */
export const SUBSCRIBER_STATUSES = ['pending', 'active', 'unsubscribed', 'bounced', 'complained'] as const;
export type SubscriberStatus = (typeof SUBSCRIBER_STATUSES)[number];

/** SIGNUP_CONFIRMATION: `single` subscribes at once, `double` waits for the e-mailed confirmation. */
export type SignupMode = 'single' | 'double';

export interface SignupRequest {
  /** Already normalised and validated. */
  email: string;
  /** The page the form was on (or `import`). */
  source: string | null;
  mode: SignupMode;
  /** Keyed hash of the client's network address, for the consent record; never the raw value. */
  networkHash: string | null;
  /**
   * Keyed hashes of the address (server/subscribers/subscriber-keys.ts): first the hash of its mailbox, which
   * the suppression list and the per-mailbox confirmation throttle go by; then older hashes that
   * the suppression list may still hold. Empty: neither applies.
   */
  addressHashes: readonly string[];
  /** WELCOME_EMAIL=on: an address this makes active has its welcome queued in the same transaction. */
  welcome?: boolean;
  /**
   * The owner's own "Subscribe again", from a page reached by a link mailed to them: only then may
   * a complained mailbox be sent a confirmation. Never set for a signup from the site or the API.
   */
  owner?: boolean;
  /** Where the visit came from, kept only on a row this signup creates (content/signup-attribution.ts). */
  origin?: SignupOrigin;
}

/**
 * A signup's origin as the site carried it from the landing page to the form: the landing page's
 * path, the landing query's `ref` and `utm_*` tokens, and a reader's share code. Normalised values
 * only; every field is optional.
 */
export interface SignupOrigin {
  page?: string;
  ref?: string;
  utm_source?: string;
  utm_medium?: string;
  utm_campaign?: string;
  share?: string;
}

/**
 * What a signup did, decided by the database:
 * - `subscribed`: the address is active now (single mode);
 * - `already_subscribed`: it already was (single mode);
 * - `send_confirmation`: a confirmation e-mail is due now (double mode, or a suppressed address);
 * - `nothing_to_send`: one went out recently, or the address is active (double mode).
 */
export interface SignupDecision {
  outcome: 'subscribed' | 'already_subscribed' | 'send_confirmation' | 'nothing_to_send';
  subscriberId: string;
}

/** A limit: at most `limit` points per window of `windowMs` under `key` (a keyed hash). */
export interface RateLimit {
  key: string;
  limit: number;
  windowMs: number;
}

/**
 * What a counted signup found: the network address's count; the mailbox's, when the network
 * address was within its limit; the signup's decision, when both were.
 */
export interface CountedSignup {
  network: RateLimitCount;
  mailbox: RateLimitCount | null;
  decision: SignupDecision | null;
}

/** What the owner's own step back onto the list found (`activated`: this call made it active). */
export interface Activation {
  email: string;
  status: SubscriberStatus;
  activated: boolean;
}

/** Everything kept about one subscriber, for their own page and "download my data". */
export interface SubscriberDetails extends SubscriberRecord {
  status: SubscriberStatus;
  statusChangedAt: Date;
  source: string | null;
  /** When the current subscription was asked for: the first signup, or the last re-subscription. */
  signedUpAt: Date;
  confirmedAt: Date | null;
  leftAt: Date | null;
  signupNetworkHash: string | null;
  confirmNetworkHash: string | null;
  welcomedAt: Date | null;
  /** Where the visit that created this row came from (the share code's owner is never named). */
  origin: Omit<SignupOrigin, 'share'>;
  /** Whether a reader's share link brought this row. */
  viaShare: boolean;
  /** The subscriber's own share code (the address /r/{code}), and how many readers it brought. */
  shareCode: string;
  referrals: number;
  /** When the row first became active; null while it never was. */
  firstActiveAt: Date | null;
  /** The recaps sent to this subscriber, oldest first. */
  deliveries: { recapDate: string; sentAt: Date }[];
  /** The other spellings of this mailbox merged into this row, each as it was kept. */
  mergedSpellings: MergedSpelling[];
}

/** A spelling of a mailbox merged into another row of it, with what was kept of it. */
export interface MergedSpelling {
  email: string;
  createdAt: Date | null;
  confirmedAt: Date | null;
  leftAt: Date | null;
  leftReason: string | null;
  signupNetworkHash: string | null;
  confirmNetworkHash: string | null;
  mergedAt: Date;
  deliveries: { recapDate: string; sentAt: Date | null }[];
}

export interface Subscriber {
  id: string;
  email: string;
  /** The reader's share code, which the Monday e-mail's footer links to; absent for a test send's address. */
  shareCode?: string;
}

export interface SubscriberRecord extends Subscriber {
  active: boolean;
  status: SubscriberStatus;
  createdAt: Date;
}

export interface SubscriberCounts {
  active: number;
  inactive: number;
  /** Of the inactive: how many are in each state. */
  byStatus: Record<SubscriberStatus, number>;
}

export interface Delivery {
  subscriberId: string;
  providerMessageId: string | null;
}

export type BatchState = 'pending' | 'sent' | 'failed' | 'unknown' | 'skipped';

/** One rendering of a recap's e-mail: the template with a marker where each unsubscribe link goes. */
export interface DigestContent {
  contentHash: string;
  recapDate: string;
  sender: string;
  siteUrl: string;
  /** A hash of the unsubscribe secret the links were signed with, never the secret. */
  secretFingerprint: string;
  subject: string;
  html: string;
  bodyText: string;
}

/** A batch written before it went to the provider: the record of what may already have gone out. */
export interface DigestBatch {
  id: string;
  recapDate: string;
  sequence: number;
  idempotencyKey: string;
  /** In the order the messages go to the provider. */
  subscriberIds: string[];
  contentHash: string;
  state: BatchState;
  /** Parallel to subscriberIds once sent: the provider's id, or null where it refused (or gave none). */
  providerIds: (string | null)[] | null;
  failure: BatchFailure | null;
  runId: string | null;
  createdAt: Date;
  settledAt: Date | null;
  /** When its first attempt was about to leave; null while none has (the run that wrote it stopped first). */
  attemptedAt: Date | null;
}

export interface BatchFailure {
  reason: string;
  /** Per recipient, where the provider said which. */
  recipients?: { id: string; reason: string }[];
}

export interface NewBatch {
  recapDate: string;
  runId: string | null;
  idempotencyKey: string;
  contentHash: string;
  subscriberIds: readonly string[];
  createdAt: Date;
}

export type BatchSettlement =
  | { state: 'sent'; accepted: readonly Delivery[]; failure: BatchFailure | null; at: Date }
  | { state: 'failed'; failure: BatchFailure; at: Date }
  | { state: 'skipped'; at: Date };

export type DigestRunKind = 'scheduled' | 'manual' | 'test' | 'dry-run' | 'settle';

export interface DigestRunResult {
  recapDate: string | null;
  outcome: string;
  sent: number;
  failed: number;
  skippedAlreadySent: number;
  skippedLeft: number;
  unknownBatches: number;
  message: string;
  finishedAt: Date;
}

export interface DigestRun extends Partial<Omit<DigestRunResult, 'outcome'>> {
  id: string;
  kind: DigestRunKind;
  startedAt: Date;
  /** Null while running, or for a run that was killed. */
  outcome: string | null;
}

/** The write-ahead batches and run history of the Monday job (supabase/migrations/…_digest_batches.sql). */
export interface DigestBatchStore {
  saveDigestContent(content: DigestContent): Promise<void>;
  findDigestContent(contentHash: string): Promise<DigestContent | null>;
  /** Active subscribers without this recap, not in an open batch of it, by id, after `afterId`. */
  listUndelivered(recapDate: string, afterId: string | null, limit: number): Promise<Subscriber[]>;
  /**
   * Commits a pending batch of those given who are still active and unserved (one statement);
   * null when none of them is.
   */
  writeDigestBatch(batch: NewBatch): Promise<DigestBatch | null>;
  /** Pending and unknown batches of a recap (of every recap when null), oldest first. */
  openDigestBatches(recapDate: string | null): Promise<DigestBatch[]>;
  findDigestBatch(id: string): Promise<DigestBatch | null>;
  /** Right before an attempt: records the batch's first attempt and answers its state (null when gone). */
  beginDigestBatchAttempt(id: string, at: Date): Promise<BatchState | null>;
  /** Closes an open batch with its ledger rows in one transaction; false when it was not open. */
  settleDigestBatch(id: string, settlement: BatchSettlement): Promise<boolean>;
  markDigestBatchUnknown(id: string, reason: string): Promise<boolean>;
  /** The addresses of these subscribers, whatever their state, and whether each is active now. */
  digestRecipients(subscriberIds: readonly string[]): Promise<(Subscriber & { active: boolean })[]>;
  startDigestRun(kind: DigestRunKind, startedAt: Date): Promise<string>;
  finishDigestRun(id: string, result: DigestRunResult): Promise<void>;
  recentDigestRuns(limit: number): Promise<DigestRun[]>;
  /** Messages of this recap the provider accepted (the delivery ledger). */
  countDeliveries(recapDate: string): Promise<number>;
}

/** The subscriber's rows and state changes (subscribers.ts). */
export interface SubscriberStore {
  /**
   * A signup in the operator's mode, with the state rules of DESIGN.md decided by the database:
   * bounced and complained addresses (and hashes on the suppression list) never become active
   * here; confirmation e-mails are throttled per address (24 h, 30 days when suppressed). A new
   * address's activation is detected by the database's unique key, never by a read before the write.
   */
  signUp(request: SignupRequest): Promise<SignupDecision>;

  /**
   * A post to POST /api/subscribe in one call: counts it against its network address, then
   * (within that limit) against its mailbox, then (within both) signs it up as signUp does, in one
   * transaction.
   */
  signUpCounted(network: RateLimit, mailbox: RateLimit, request: SignupRequest): Promise<CountedSignup>;

  /**
   * The owner's step back onto the list: `confirmation` (the e-mailed button: from pending,
   * bounced or complained) or `resubscribe` ("Subscribe again" on their own page: from
   * unsubscribed or pending). Null when there is no such subscriber. With `welcome`, an address
   * this makes active has its welcome e-mail queued in the same transaction.
   */
  activateSubscriber(id: string, how: 'confirmation' | 'resubscribe', networkHash: string | null, welcome?: boolean): Promise<Activation | null>;

  /** State, consent record and deliveries of one subscriber; null when there is none. */
  subscriberDetails(id: string): Promise<SubscriberDetails | null>;

  /**
   * Deletes the subscriber and its ledger rows. When it had bounced or complained, `addressHash`
   * stays on the suppression list. Returns the state it had, or null when there was none.
   */
  deleteSubscriber(id: string, addressHash: string): Promise<SubscriberStatus | null>;

  findSubscriber(id: string): Promise<SubscriberRecord | null>;
  findSubscriberByEmail(email: string): Promise<SubscriberRecord | null>;

  /**
   * Marks a subscriber as gone; the stricter state wins (complained > bounced > unsubscribed).
   * Returns false when there is no such subscriber. Idempotent.
   */
  removeSubscriber(id: string, reason: RemovalReason): Promise<boolean>;

  /**
   * Puts a mailbox (its keyed hash, SubscriberKeys.addressHashes' first) on the suppression list
   * with no row: a complaint for an address already deleted. A complaint is never weakened.
   */
  suppressMailbox(addressHash: string, reason: 'bounced' | 'complained'): Promise<void>;

  /** Every subscriber (active or not) in id order, `limit` at a time after `afterId`, for export. */
  listAllSubscribers(afterId: string | null, limit: number): Promise<SubscriberRecord[]>;

  countSubscribers(): Promise<SubscriberCounts>;
}

/** The key of the mailbox hashes (mailbox-keys.ts). */
export interface MailboxKeyStore {
  /**
   * The key of the mailbox hashes (server/subscribers/subscriber-keys.ts), created once and kept in the
   * database, never rotated with UNSUBSCRIBE_SECRET: `candidate` when none is stored yet.
   */
  mailboxHashKey(candidate: string): Promise<string>;
}

/** A claimed tick's new run: its history row, whether the tick is a late one, whether another holder had it. */
export interface DigestTickStart {
  runId: string;
  late: boolean;
  takenOver: boolean;
}

/** One DIGEST_CRON tick as recorded (20261130002010_digest_ticks.sql). */
/** A DIGEST_CRON and its DIGEST_TZ, as a scheduling server runs them. */
export interface DigestSchedule {
  cron: string;
  timezone: string;
}

export interface DigestTick {
  tick: Date;
  holder: string;
  state: 'running' | 'done' | 'missed' | 'abandoned';
  late: boolean;
  runId: string | null;
  recapDate: string | null;
  leaseUntil: Date;
  /** The outcome of the tick's latest run; null while it runs or when it was killed. */
  outcome: string | null;
}

/** The sending lease of a recap and the record of ticks (digest-lease.ts). */
export interface DigestLeaseStore {
  /**
   * Takes or renews the sending lease for a recap. Returns false while another holder's lease
   * is still valid. A lease that is not renewed expires after `leaseMs`. With `now`, time is the
   * caller's clock (a manual one) instead of the database's.
   */
  acquireDigestLock(recapDate: string, holder: string, leaseMs: number, now?: Date): Promise<boolean>;
  releaseDigestLock(recapDate: string, holder: string): Promise<void>;
  /**
   * Claims a DIGEST_CRON tick and starts its scheduled run in one transaction: a new tick, one this
   * holder already holds, or one whose holder's lease has passed. Null while another holder's lease
   * is valid or the tick is settled.
   */
  beginDigestTick(claim: { tick: Date; holder: string; now: Date; leaseMs: number; late: boolean }): Promise<DigestTickStart | null>;
  /** Keeps the holder's claim until `until`; false when it is no longer this holder's running tick. */
  renewDigestTick(tick: Date, holder: string, until: Date): Promise<boolean>;
  /**
   * Settles a running tick, the holder's or one whose holder's lease has passed; true for the one
   * caller that settled it. With `notice`, the operator's notice is queued in the same statement,
   * so a tick never ends without the notice its end deserves.
   */
  endDigestTick(end: { tick: Date; holder: string; now: Date; state: 'done' | 'missed' | 'abandoned'; recapDate: string | null; notice?: QueuedNotice | null }): Promise<boolean>;
  /**
   * Records a tick nobody ran as missed; true for exactly one caller. With `notice`, the operator's
   * notice is queued in the same statement, so a tick is never recorded missed without it.
   */
  recordMissedDigestTick(tick: Date, holder: string, now: Date, notice?: QueuedNotice | null): Promise<boolean>;
  /** The tick record from `since` on, newest first. */
  digestTicksSince(since: Date): Promise<DigestTick[]>;
  /** Records that a server started scheduling with this DIGEST_CRON and DIGEST_TZ at `at`. */
  recordScheduleStart(schedule: DigestSchedule, at: Date): Promise<void>;
  /** The schedule of the newest recorded start at or before `at`; null when none is recorded by then. */
  scheduleInForce(at: Date): Promise<DigestSchedule | null>;
}

/** What a backend adds to the operations: which one it is, readiness, shutdown. */
export interface StoreTransport {
  readonly backend: 'pglite' | 'postgres' | 'supabase';

  /** Throws StoreUnavailableError unless the store answers and its migrations are applied. */
  checkReady(): Promise<void>;

  close(): Promise<void>;
}

export interface Store
  extends StoreTransport,
    SubscriberStore,
    MailboxKeyStore,
    PendingSignupStore,
    RetentionStore,
    DigestBatchStore,
    DigestLeaseStore,
    RateLimitCounters,
    ReportStore,
    EngagementStore,
    MailOutboxStore,
    ServerNoticeStore,
    SubscriberLinkStore,
    SubscriberImportStore,
    MetricsStore,
    NoticeWebhookStore,
    ReferralStore {}

// What each consumer uses of the Store, so each sees only its own part.

/** The site's routes and bot defences. */
export type SiteStore = Pick<
  Store,
  | 'signUp'
  | 'signUpCounted'
  | 'activateSubscriber'
  | 'subscriberDetails'
  | 'deleteSubscriber'
  | 'mailboxHashKey'
  | 'findSubscriber'
  | 'findSubscriberByEmail'
  | 'removeSubscriber'
  | 'suppressMailbox'
  | 'recordEmailEvent'
  | 'recordLinkClick'
  | 'countEmailEngagement'
  | 'recordServerNotice'
  | 'clearServerNotice'
  | 'shareCodeKnown'
  | 'replaceShareCode'
> &
  RateLimitCounters &
  SubscriberLinkStore;

/**
 * The Monday job (jobs/digest): its batches and runs, the lease, the pending and retention clean-ups, a few
 * figures, and the mail outbox for the operator's notices (with the recap's totals they report).
 */
export type DigestStore = DigestBatchStore &
  DigestLeaseStore &
  PendingSignupStore &
  RetentionStore &
  Pick<EngagementStore, 'pruneLinkClickWindow'> &
  Pick<SubscriberStore, 'countSubscribers' | 'findSubscriberByEmail'> &
  Pick<MailOutboxStore, 'enqueueMail' | 'outboxSummary'> &
  Pick<NoticeWebhookStore, 'queueNoticePost'> &
  Pick<ReportStore, 'reportSnapshot'>;

/** The operator's report (jobs/report). */
export type ReportReadStore = Pick<Store, 'reportSnapshot' | 'countDeliveries' | 'outboxSummary' | 'serverNotices' | 'engagementCounts' | 'growthReport'>;

/** `npm run subscribers` (bin/subscribers.ts). */
export type SubscribersCliStore = Pick<Store, 'mailboxHashKey' | 'listAllSubscribers' | 'countSubscribers' | 'importSubscribers'>;

/** The store cannot be reached or answered with a failure that is not the caller's fault. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** The database answers but lacks migrations: readiness names them, the operator applies them. */
export class MigrationsPendingError extends StoreUnavailableError {
  constructor(
    readonly pending: readonly string[],
    hint?: string,
  ) {
    super(`Database migrations not applied: ${pending.join(', ')}${hint ? `; ${hint}` : ''}`);
    this.name = 'MigrationsPendingError';
  }
}

/** Another process already owns the embedded database. */
export class StoreLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreLockedError';
  }
}
