// The durable outbox of confirmation, welcome and operator e-mails, over the SQL functions of
// supabase/migrations/20261124002000_mail_outbox.sql (called by name, like every store operation: call-function.ts), so
// every backend claims, settles and counts the same way.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

// 'link': a fresh one-use link (server/subscribers/link-tokens.ts, supabase/migrations/20261124003010_subscriber_links.sql).
export const OUTBOX_KINDS = ['confirm', 'welcome', 'operator', 'link'] as const;
export type OutboxKind = (typeof OUTBOX_KINDS)[number];

/** An operator notice's content; confirmations and welcomes are rendered from the subscriber. */
export interface OperatorPayload {
  to: string;
  subject: string;
  text: string;
}

/** A message a worker has claimed (and holds under a lease until it settles it). */
export interface OutboxMessage {
  id: string;
  kind: OutboxKind;
  subscriberId: string | null;
  payload: Record<string, unknown>;
  /** Counting this one. */
  attempts: number;
  createdAt: Date;
  /** The subscriber's address and state now; null when the subscriber was deleted since. */
  email: string | null;
  status: string | null;
}

export type OutboxSettlement =
  | { state: 'sent'; providerId: string | null }
  | { state: 'retrying'; error: string; retrySeconds: number }
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
  /** The latest failed, retrying or unknown messages, newest first. */
  failures: { id: string; kind: OutboxKind; state: OutboxFailureState; createdAt: Date; attempts: number; lastError: string | null }[];
}

export interface MailOutboxStore {
  /** Queues a message outside a subscriber change (the operator's notices). */
  enqueueMail(kind: OutboxKind, subscriberId: string | null, payload: Record<string, unknown>): Promise<string>;
  /** Up to `limit` due messages, leased for `leaseSeconds`. */
  claimMail(limit: number, leaseSeconds: number): Promise<OutboxMessage[]>;
  /** False when the message was not open any more. */
  settleMail(id: string, settlement: OutboxSettlement): Promise<boolean>;
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
    }),
  );

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

    async claimMail(limit, leaseSeconds) {
      return z.array(messageRow).parse(json(await call('outbox_claim', { p_limit: limit, p_lease_seconds: Math.ceil(leaseSeconds) })));
    },

    async settleMail(messageId, settlement) {
      const answer = await call('outbox_settle', {
        p_id: messageId,
        p_state: settlement.state,
        p_error: settlement.state === 'sent' ? null : settlement.error.slice(0, 500),
        p_retry_seconds: settlement.state === 'retrying' ? Math.ceil(settlement.retrySeconds) : null,
        p_provider_id: settlement.state === 'sent' ? settlement.providerId : null,
      });
      return answer === true;
    },

    async outboxSummary(days) {
      return summaryRow.parse(json(await call('outbox_recent', { p_days: Math.round(days) })));
    },
  };
}
