// The queue of operator notices to post to NOTICE_WEBHOOK_URL, over the SQL functions of
// supabase/migrations/20261130005010_notice_webhooks.sql. Rows are written by a trigger on the
// outbox row that records a notice for OPERATOR_EMAIL, or queued here when no address is set.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

export interface NoticePost {
  id: string;
  text: string;
  /** Counting this one. */
  attempts: number;
  createdAt: Date;
}

export type NoticePostSettlement = { state: 'sent' } | { state: 'retrying'; error: string; retrySeconds: number };

export interface NoticeWebhookStore {
  /** Queues a post of `text` for a notice that has no OPERATOR_EMAIL to go to. */
  queueNoticePost(text: string): Promise<void>;
  /** Up to `limit` due posts, leased for `leaseSeconds`; open posts older than `maxAgeSeconds` are closed as expired. */
  claimNoticePosts(limit: number, leaseSeconds: number, maxAgeSeconds: number): Promise<NoticePost[]>;
  /** False when the post was not open any more. */
  settleNoticePost(id: string, settlement: NoticePostSettlement): Promise<boolean>;
}

const postRow = z
  .object({ id: z.union([z.string(), z.number()]).transform(String), text: z.string(), attempts: z.number(), created_at: z.string() })
  .transform((row): NoticePost => ({ id: row.id, text: row.text, attempts: row.attempts, createdAt: new Date(row.created_at) }));

export function noticeWebhookStore(call: CallFunction): NoticeWebhookStore {
  return {
    async queueNoticePost(text) {
      await call('notice_webhook_enqueue', { p_text: text });
    },
    async claimNoticePosts(limit, leaseSeconds, maxAgeSeconds) {
      const answer = await call('notice_webhook_claim', { p_limit: limit, p_lease_seconds: Math.ceil(leaseSeconds), p_max_age_seconds: Math.ceil(maxAgeSeconds) });
      return z.array(postRow).parse(typeof answer === 'string' ? JSON.parse(answer) : answer);
    },
    async settleNoticePost(id, settlement) {
      const answer = await call('notice_webhook_settle', {
        p_id: id,
        p_state: settlement.state,
        p_error: settlement.state === 'retrying' ? settlement.error : null,
        p_retry_seconds: settlement.state === 'retrying' ? Math.ceil(settlement.retrySeconds) : null,
      });
      return answer === true;
    },
  };
}
