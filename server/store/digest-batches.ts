// The write-ahead batches and run history of the Monday job, over the SQL functions of
// supabase/migrations/20261123000300_digest_batches.sql. Every backend only has to call a function
// by name with named arguments and hand back its jsonb answer: the SQL store does it with a
// statement, the Supabase store through /rest/v1/rpc. So the logic exists once, in SQL.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';
import type {
  BatchSettlement,
  DigestBatch,
  DigestBatchStore,
  DigestContent,
  DigestRun,
  DigestRunKind,
  DigestRunResult,
  NewBatch,
  Subscriber,
} from './types.ts';

export type { CallFunction } from './call-function.ts';

const id = z.union([z.string(), z.number()]).transform(String);
const date = z.string().transform((value) => value.slice(0, 10));
const instant = z.string().transform((value) => new Date(value));

const batchState = z.enum(['pending', 'sent', 'failed', 'unknown', 'skipped']);

const batchRow = z
  .object({
    id,
    recap_date: date,
    sequence: z.number(),
    idempotency_key: z.string(),
    subscriber_ids: z.array(z.string()),
    content_hash: z.string(),
    state: batchState,
    provider_ids: z.array(z.string().nullable()).nullable(),
    failure: z.object({ reason: z.string(), recipients: z.array(z.object({ id: z.string(), reason: z.string() })).optional() }).nullable(),
    run_id: id.nullable(),
    created_at: instant,
    settled_at: instant.nullable(),
    attempted_at: instant.nullable().optional(),
  })
  .transform(
    (row): DigestBatch => ({
      id: row.id,
      recapDate: row.recap_date,
      sequence: row.sequence,
      idempotencyKey: row.idempotency_key,
      subscriberIds: row.subscriber_ids,
      contentHash: row.content_hash,
      state: row.state,
      providerIds: row.provider_ids,
      failure: row.failure,
      runId: row.run_id,
      createdAt: row.created_at,
      settledAt: row.settled_at,
      attemptedAt: row.attempted_at ?? null,
    }),
  );

const contentRow = z
  .object({
    content_hash: z.string(),
    recap_date: date,
    sender: z.string(),
    site_url: z.string(),
    secret_fingerprint: z.string(),
    subject: z.string(),
    html: z.string(),
    body_text: z.string(),
  })
  .transform(
    (row): DigestContent => ({
      contentHash: row.content_hash,
      recapDate: row.recap_date,
      sender: row.sender,
      siteUrl: row.site_url,
      secretFingerprint: row.secret_fingerprint,
      subject: row.subject,
      html: row.html,
      bodyText: row.body_text,
    }),
  );

const runRow = z
  .object({
    id,
    kind: z.enum(['scheduled', 'manual', 'test', 'dry-run', 'settle']),
    started_at: instant,
    finished_at: instant.nullable(),
    recap_date: date.nullable(),
    outcome: z.string().nullable(),
    sent: z.number(),
    failed: z.number(),
    skipped_already_sent: z.number(),
    skipped_left: z.number(),
    unknown_batches: z.number(),
    message: z.string().nullable(),
  })
  .transform(
    (row): DigestRun => ({
      id: row.id,
      kind: row.kind,
      startedAt: row.started_at,
      outcome: row.outcome,
      recapDate: row.recap_date,
      sent: row.sent,
      failed: row.failed,
      skippedAlreadySent: row.skipped_already_sent,
      skippedLeft: row.skipped_left,
      unknownBatches: row.unknown_batches,
      message: row.message ?? undefined,
      finishedAt: row.finished_at ?? undefined,
    }),
  );

const recipient = { id, email: z.string(), share_code: z.string().nullish() };
const withShareCode = <T extends { share_code?: string | null }>({ share_code: code, ...rest }: T) => ({ ...rest, ...(code ? { shareCode: code } : {}) });
const subscribers = z.array(z.object(recipient).transform(withShareCode));

export function digestBatchStore(call: CallFunction): DigestBatchStore {
  return {
    async saveDigestContent(content: DigestContent) {
      await call('digest_save_content', {
        p_content_hash: content.contentHash,
        p_recap_date: content.recapDate,
        p_sender: content.sender,
        p_site_url: content.siteUrl,
        p_secret_fingerprint: content.secretFingerprint,
        p_subject: content.subject,
        p_html: content.html,
        p_body_text: content.bodyText,
      });
    },

    async findDigestContent(contentHash: string) {
      const row = await call('digest_content', { p_content_hash: contentHash });
      return row === null ? null : contentRow.parse(row);
    },

    async listUndelivered(recapDate: string, afterId: string | null, limit: number): Promise<Subscriber[]> {
      return subscribers.parse(await call('digest_undelivered', { p_recap_date: recapDate, p_after: afterId, p_limit: limit }));
    },

    async writeDigestBatch(batch: NewBatch) {
      const row = await call('digest_write_batch', {
        p_recap_date: batch.recapDate,
        p_run_id: batch.runId,
        p_idempotency_key: batch.idempotencyKey,
        p_content_hash: batch.contentHash,
        p_subscriber_ids: batch.subscriberIds,
        p_created_at: batch.createdAt.toISOString(),
      });
      return row === null ? null : batchRow.parse(row);
    },

    async openDigestBatches(recapDate: string | null) {
      return z.array(batchRow).parse(await call('digest_open_batches', { p_recap_date: recapDate }));
    },

    async findDigestBatch(batchId: string) {
      // Anything but digits is no batch (and must not reach a bigint cast as a 500).
      if (!/^\d{1,18}$/.test(batchId)) return null;
      const row = await call('digest_batch', { p_id: batchId });
      return row === null ? null : batchRow.parse(row);
    },

    async beginDigestBatchAttempt(batchId: string, at: Date) {
      const state = await call('digest_batch_attempt', { p_id: batchId, p_at: at.toISOString() });
      return state === null || state === undefined ? null : batchState.parse(state);
    },

    async settleDigestBatch(batchId: string, settlement: BatchSettlement) {
      const answer = await call('digest_settle_batch', {
        p_id: batchId,
        p_state: settlement.state,
        p_accepted: settlement.state === 'sent' ? settlement.accepted.map((d) => ({ id: d.subscriberId, provider_id: d.providerMessageId })) : null,
        p_failure: settlement.state === 'skipped' ? null : settlement.failure,
        p_settled_at: settlement.at.toISOString(),
      });
      return answer === true;
    },

    async markDigestBatchUnknown(batchId: string, reason: string) {
      return (await call('digest_mark_unknown', { p_id: batchId, p_reason: reason })) === true;
    },

    async digestRecipients(subscriberIds: readonly string[]) {
      if (subscriberIds.length === 0) return [];
      return z.array(z.object({ ...recipient, active: z.boolean() }).transform(withShareCode)).parse(await call('digest_recipients', { p_subscriber_ids: subscriberIds }));
    },

    async startDigestRun(kind: DigestRunKind, startedAt: Date) {
      return id.parse(await call('digest_start_run', { p_kind: kind, p_started_at: startedAt.toISOString() }));
    },

    async finishDigestRun(runId: string, result: DigestRunResult) {
      await call('digest_finish_run', {
        p_id: runId,
        p_recap_date: result.recapDate,
        p_outcome: result.outcome,
        p_sent: result.sent,
        p_failed: result.failed,
        p_skipped_already_sent: result.skippedAlreadySent,
        p_skipped_left: result.skippedLeft,
        p_unknown_batches: result.unknownBatches,
        p_message: result.message,
        p_finished_at: result.finishedAt.toISOString(),
      });
    },

    async recentDigestRuns(limit: number) {
      return z.array(runRow).parse(await call('digest_recent_runs', { p_limit: limit }));
    },

    async countDeliveries(recapDate: string) {
      return Number(await call('digest_count_deliveries', { p_recap_date: recapDate }));
    },
  };
}
