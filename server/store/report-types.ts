// What the store keeps and answers for the operator's report (npm run report): the webhook's
// events as received, and one snapshot of the list's history and the digest's sends. The snapshot
// comes from one SQL function (supabase/migrations/…_report_snapshot_function.sql) on every
// backend, and is parsed here, at the store's boundary.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

export interface EmailEvent {
  /** The webhook delivery's svix-id: a replayed delivery is stored once. */
  svixId: string;
  /** Resend's event type, e.g. email.bounced. */
  type: string;
  /** Resend's email_id: the id the mailer got back when it sent the message. */
  providerMessageId: string | null;
  subscriberId: string | null;
  occurredAt: Date;
}

const count = z.number().int().nonnegative();

export const reportSnapshotSchema = z.object({
  generatedAt: z.coerce.date(),
  weeks: z.array(z.object({ week: z.string(), states: z.record(z.string(), count), signups: count })),
  sources: z.array(z.object({ source: z.string(), signups: count })),
  sends: z.array(
    z.object({
      recapDate: z.string(),
      /** Messages the provider accepted (the ledger). */
      sent: count,
      /** Messages the provider refused, over every real run (the run history). */
      failed: count,
      /** Recipients of batches that could not be settled, awaiting `npm run digest -- --settle`. */
      unknown: count,
      /** Recipients of batches the operator settled as not sent. */
      skipped: count,
      firstSentAt: z.coerce.date().nullable(),
      lastSentAt: z.coerce.date().nullable(),
      bounced: count,
      complained: count,
    }),
  ),
  totals: z.record(z.string(), count),
});

export type ReportSnapshot = z.infer<typeof reportSnapshotSchema>;

export interface ReportStore {
  /** Stores one webhook event; a second delivery with the same svix id changes nothing. */
  recordEmailEvent(event: EmailEvent): Promise<void>;
  /** The report's figures, covering at most the last `weeks` weeks. */
  reportSnapshot(weeks: number): Promise<ReportSnapshot>;
}

export function reportStore(call: CallFunction): ReportStore {
  return {
    async recordEmailEvent(event) {
      await call('record_email_event', {
        p_svix_id: event.svixId,
        p_event_type: event.type,
        p_provider_message_id: event.providerMessageId,
        p_subscriber_id: event.subscriberId,
        p_occurred_at: event.occurredAt.toISOString(),
      });
    },
    reportSnapshot: async (weeks) => reportSnapshotSchema.parse(await call('report_snapshot', { p_weeks: weeks })),
  };
}
