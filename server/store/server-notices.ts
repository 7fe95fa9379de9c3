// What a server noticed about its own set-up (such as TRUST_PROXY=0 behind a proxy), over
// the SQL functions of supabase/migrations/20261124005030_server_notices.sql, so the operator's
// report, a separate process, can show it among its checks.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

export type ServerNoticeName = 'trust-proxy';

export interface ServerNotice {
  name: ServerNoticeName;
  detail: string;
  firstSeenAt: Date;
  lastSeenAt: Date;
}

export interface ServerNoticeStore {
  /** Records (or refreshes) a notice; one row per name. */
  recordServerNotice(name: ServerNoticeName, detail: string): Promise<void>;
  /** Forgets a notice once its cause is fixed. */
  clearServerNotice(name: ServerNoticeName): Promise<void>;
  serverNotices(): Promise<ServerNotice[]>;
}

const instant = z.string().transform((value) => new Date(value));
const noticeRows = z.array(
  z
    .object({ name: z.enum(['trust-proxy']), detail: z.string(), first_seen_at: instant, last_seen_at: instant })
    .transform((row): ServerNotice => ({ name: row.name, detail: row.detail, firstSeenAt: row.first_seen_at, lastSeenAt: row.last_seen_at })),
);

export function serverNoticeStore(call: CallFunction): ServerNoticeStore {
  return {
    async recordServerNotice(name, detail) {
      await call('server_notice_record', { p_name: name, p_detail: detail });
    },
    async clearServerNotice(name) {
      await call('server_notice_clear', { p_name: name });
    },
    async serverNotices() {
      const answer = await call('server_notices', {});
      return noticeRows.parse(typeof answer === 'string' ? JSON.parse(answer) : answer);
    },
  };
}
