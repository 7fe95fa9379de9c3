// The durable outbox of confirmation, welcome and operator e-mails, over the SQL functions of
// supabase/migrations/20261124002000_mail_outbox.sql and 20261130001010_outbox_keys.sql (called by
// name, like every store operation: call-function.ts), so every backend claims, settles and counts
// the same way.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

/** Resend keeps an idempotency key for 24 hours: after that a repeat under it could be a second copy. */
export const OUTBOX_KEY_LIFE_SECONDS = 24 * 60 * 60;

// 'link': a fresh one-use link (server/subscribers/link-tokens.ts, supabase/migrations/20261124003010_subscriber_links.sql).
export const OUTBOX_KINDS = ['confirm', 'welcome', 'operator', 'link', 'referral_thanks'] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];

/** An operator notice's content; confirmations and welcomes are rendered from the subscriber. */
export interface OperatorPayload {
  to: string;
  subject: string;
  text: string;
}

/** What is queued for an operator's notice: an outbox e-mail's payload, or (without an address) the webhook's post. */
export type QueuedNotice = { email: OperatorPayload; webhookText?: undefined } | { email?: undefined; webhookText: string };

/** A queued notice as the `*_with_notice` SQL functions take it (operator_notice_enqueue decides its channel). */
export const queuedNoticeArgs = (notice: QueuedNotice) => ({ p_email: notice.email ?? null, p_webhook_text: notice.webhookText ?? null });

/** A message a worker has claimed (and holds under a lease until it settles it). */
export interface OutboxMessage {
  id: string;
  kind: OutboxKind;
  subscriberId: string | null;
  payload: Record<string, unknown>;
  /** Counting this one. */
  attempts: number;
  createdAt: Date;
  /** This claim's token: settling needs it, so a worker whose lease ran out changes nothing. */
  claim: string;
  /** The idempotency key of this try: random per message, with a generation renewed when the last one is about to expire. */
  key: string;
  /** An earlier try under this key may have reached the provider (no answer, or a claim never settled). */
  uncertain: boolean;
  /**
   * This try is under a fresh key generation, and a try under the old one had no answer: if that
   * one went out, this is a second copy (the lesser harm than mail that never arrives).
   */
  repeatPossible: boolean;
  /** The subscriber's address and state now; null when the subscriber was deleted since. */
  email: string | null;
  status: string | null;
}

export type OutboxSettlement =
  | { state: 'sent'; providerId: string | null }
  // uncertain: this try may have reached the provider (no answer came).
  | { state: 'retrying'; error: string; retrySeconds: number; uncertain?: boolean }
  | { state: 'failed' | 'cancelled'; error: string }
  // Closed without knowing whether it went out (a 409 under its own key): never tried again.
  | { state: 'unknown'; error: string };

export type OutboxFailureState = 'failed' | 'retrying' | 'unknown';

export interface OutboxSummary {
  days: number;
  queued: number;
  retrying: number;
  failed: number;
  sent: number;
  /** Closed on a 409 under the message's own key: very likely sent, never retried (not counted as sent). */
  unknown: number;
  oldestOpenAt: Date | null;
  /** Set while the provider refuses the sender itself: every message waits, none fails. */
  hold: SenderHold | null;
  /** The latest failed, retrying or unknown messages, newest first. */
  failures: { id: string; kind: OutboxKind; state: OutboxFailureState; createdAt: Date; attempts: number; lastError: string | null }[];
}

/** Why the provider refuses the sender: its API key (invalid, revoked, restricted) or a used-up quota. */
export type SenderRefusalCause = 'key' | 'quota';

export interface SenderHold {
  cause: SenderRefusalCause;
  /** The provider's own words, from the latest refusal. */
  reason: string;
  since: Date;
  lastRefusedAt: Date;
}

/** A claimed message as settling needs it. */
export type ClaimedRef = Pick<OutboxMessage, 'id' | 'claim'>;

export interface ClaimOptions {
  /** The caller's clock (the worker's); the database's own when absent. */
  now?: Date;
  /** How long a key may be used from its first try; the provider keeps it 24 h. */
  keySeconds?: number;
}

export interface MailOutboxStore {
  /** Queues a message outside a subscriber change (the operator's notices). */
  enqueueMail(kind: OutboxKind, subscriberId: string | null, payload: Record<string, unknown>): Promise<string>;
  /** Up to `limit` due messages, leased for `leaseSeconds`. */
  claimMail(limit: number, leaseSeconds: number, options?: ClaimOptions): Promise<OutboxMessage[]>;
  /** False when the message was not open any more, or is no longer under this claim. */
  settleMail(claimed: ClaimedRef, settlement: OutboxSettlement, now?: Date): Promise<boolean>;
  /**
   * Records a refusal of the sender; true when it begins a hold (or changes its cause), which the
   * operator is told of. With `notice`, that notice is queued in the same statement, so a hold is
   * never recorded without it.
   */
  holdSender(cause: SenderRefusalCause, reason: string, now?: Date, notice?: QueuedNotice | null): Promise<boolean>;
  /** Ends the hold once mail is accepted again; the hold that ended, if there was one. */
  releaseSender(): Promise<Pick<SenderHold, 'cause' | 'reason' | 'since'> | null>;
  outboxSummary(days: number): Promise<OutboxSummary>;
}

const id = z.union([z.string(), z.number()]).transform(String);
const instant = z.string().transform((value) => new Date(value));
const kind = z.enum(OUTBOX_KINDS);

const messageRow = z
  .object({
    id,
    kind,
    subscriber_id: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()).nullable(),
    attempts: z.number(),
    created_at: instant,
    email: z.string().nullable(),
    status: z.string().nullable(),
    claim: z.string(),
    key: z.string(),
    uncertain: z.boolean(),
    repeat_possible: z.boolean(),
  })
  .transform(
    (row): OutboxMessage => ({
      id: row.id,
      kind: row.kind,
      subscriberId: row.subscriber_id,
      payload: row.payload ?? {},
      attempts: row.attempts,
      createdAt: row.created_at,
      email: row.email,
      status: row.status,
      claim: row.claim,
      key: row.key,
      uncertain: row.uncertain,
      repeatPossible: row.repeat_possible,
    }),
  );

const cause = z.enum(['key', 'quota']);
const holdRow = z.object({ cause, reason: z.string(), since: instant, last_refused_at: instant }).transform((h): SenderHold => ({ cause: h.cause, reason: h.reason, since: h.since, lastRefusedAt: h.last_refused_at }));

const count = z.union([z.number(), z.string()]).transform(Number);

const summaryRow = z
  .object({
    days: z.number(),
    queued: count,
    retrying: count,
    failed: count,
    sent: count,
    unknown: count,
    oldest_open_at: instant.nullable(),
    failures: z.array(z.object({ id, kind, state: z.enum(['failed', 'retrying', 'unknown']), created_at: instant, attempts: z.number(), last_error: z.string().nullable() })),
    hold: holdRow.nullable().optional(),
  })
  .transform(
    (row): OutboxSummary => ({
      days: row.days,
      queued: row.queued,
      retrying: row.retrying,
      failed: row.failed,
      sent: row.sent,
      unknown: row.unknown,
      oldestOpenAt: row.oldest_open_at,
      hold: row.hold ?? null,
      failures: row.failures.map((f) => ({ id: f.id, kind: f.kind, state: f.state, createdAt: f.created_at, attempts: f.attempts, lastError: f.last_error })),
    }),
  );

/** jsonb may come back as text from some drivers. */
const json = (value: unknown) => (typeof value === 'string' ? (JSON.parse(value) as unknown) : value);

export function mailOutboxStore(call: CallFunction): MailOutboxStore {
  return {
    async enqueueMail(kind, subscriberId, payload) {
      return id.parse(await call('outbox_enqueue', { p_kind: kind, p_subscriber_id: subscriberId, p_payload: payload }));
    },

    async claimMail(limit, leaseSeconds, options = {}) {
      const keySeconds = Math.floor(options.keySeconds ?? OUTBOX_KEY_LIFE_SECONDS - leaseSeconds);
      return z.array(messageRow).parse(
        json(await call('outbox_claim', { p_limit: limit, p_lease_seconds: Math.ceil(leaseSeconds), p_key_seconds: keySeconds, p_now: options.now?.toISOString() ?? null })),
      );
    },

    async settleMail(claimed, settlement, now) {
      const answer = await call('outbox_settle', {
        p_id: claimed.id,
        p_claim: claimed.claim,
        p_state: settlement.state,
        p_error: settlement.state === 'sent' ? null : settlement.error.slice(0, 500),
        p_retry_seconds: settlement.state === 'retrying' ? Math.ceil(settlement.retrySeconds) : null,
        p_provider_id: settlement.state === 'sent' ? settlement.providerId : null,
        p_uncertain: settlement.state === 'retrying' ? (settlement.uncertain ?? false) : false,
        p_now: now?.toISOString() ?? null,
      });
      return answer === true;
    },

    async holdSender(refusal, reason, now, notice) {
      const args = { p_cause: refusal, p_reason: reason.slice(0, 500), p_now: now?.toISOString() ?? null };
      if (!notice) return (await call('outbox_hold_sender', args)) === true;
      return (await call('outbox_hold_sender_with_notice', { ...args, ...queuedNoticeArgs(notice) })) === true;
    },

    async releaseSender() {
      const ended = json(await call('outbox_release_sender', {}));
      if (ended === null || ended === undefined) return null;
      const row = z.object({ cause, reason: z.string(), since: instant }).parse(ended);
      return { cause: row.cause, reason: row.reason, since: row.since };
    },

    async outboxSummary(days) {
      return summaryRow.parse(json(await call('outbox_recent', { p_days: Math.round(days) })));
    },
  };
}
