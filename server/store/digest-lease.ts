// The sending lease of a recap, over acquire_digest_lock and release_digest_lock
// (supabase/migrations/20250801000300_digest_lock_function.sql): one holder at a time sends a
// recap; a lease that is not renewed expires. And the record of DIGEST_CRON ticks
// (20261130002010_digest_ticks.sql): a tick's claim and its run are made in one transaction; and
// which DIGEST_CRON was in force when (20261201003010_digest_schedule_starts.sql).
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';
import { queuedNoticeArgs } from './mail-outbox.ts';
import type { DigestLeaseStore, DigestTick, DigestTickStart } from './types.ts';

const instant = z.union([z.string(), z.date()]).transform((value) => new Date(value));
const dateOnly = z.union([z.string(), z.date()]).transform((value) => (typeof value === 'string' ? value.slice(0, 10) : value.toISOString().slice(0, 10)));

const tickRow = z.object({
  tick: instant,
  holder: z.string(),
  state: z.enum(['running', 'done', 'missed', 'abandoned']),
  late: z.boolean(),
  run_id: z.string().nullable(),
  recap_date: dateOnly.nullable(),
  lease_until: instant,
  outcome: z.string().nullable(),
});

const tickStart = z.object({ run_id: z.string(), late: z.boolean(), taken_over: z.boolean() });

const json = (answer: unknown) => (typeof answer === 'string' ? JSON.parse(answer) : answer);

export function digestLeaseStore(call: CallFunction): DigestLeaseStore {
  return {
    acquireDigestLock: async (recapDate, holder, leaseMs, now) =>
      (now
        ? await call('acquire_digest_lock_at', { p_recap_date: recapDate, p_holder: holder, p_lease_ms: Math.round(leaseMs), p_now: now.toISOString() })
        : await call('acquire_digest_lock', { p_recap_date: recapDate, p_holder: holder, p_lease_ms: Math.round(leaseMs) })) === true,
    async releaseDigestLock(recapDate, holder) {
      await call('release_digest_lock', { p_recap_date: recapDate, p_holder: holder });
    },
    async beginDigestTick({ tick, holder, now, leaseMs, late }): Promise<DigestTickStart | null> {
      const answer = json(await call('digest_begin_tick', { p_tick: tick.toISOString(), p_holder: holder, p_now: now.toISOString(), p_lease_ms: Math.round(leaseMs), p_late: late }));
      if (answer === null || answer === undefined) return null;
      const parsed = tickStart.parse(answer);
      return { runId: parsed.run_id, late: parsed.late, takenOver: parsed.taken_over };
    },
    renewDigestTick: async (tick, holder, until) => (await call('digest_renew_tick', { p_tick: tick.toISOString(), p_holder: holder, p_until: until.toISOString() })) === true,
    async endDigestTick({ tick, holder, now, state, recapDate, notice }) {
      const end = { p_tick: tick.toISOString(), p_holder: holder, p_now: now.toISOString(), p_state: state, p_recap_date: recapDate };
      const answer = notice
        ? await call('digest_end_tick_with_notice', { ...end, ...queuedNoticeArgs(notice) })
        : await call('digest_end_tick', end);
      return answer === true;
    },
    async recordMissedDigestTick(tick, holder, now, notice) {
      const missed = { p_tick: tick.toISOString(), p_holder: holder, p_now: now.toISOString() };
      const answer = notice ? await call('digest_record_missed_tick_with_notice', { ...missed, ...queuedNoticeArgs(notice) }) : await call('digest_record_missed_tick', missed);
      return answer === true;
    },
    async digestTicksSince(since): Promise<DigestTick[]> {
      return z
        .array(tickRow)
        .parse(json(await call('digest_ticks_since', { p_since: since.toISOString() })))
        .map((row) => ({ tick: row.tick, holder: row.holder, state: row.state, late: row.late, runId: row.run_id, recapDate: row.recap_date, leaseUntil: row.lease_until, outcome: row.outcome }));
    },
    async recordScheduleStart({ cron, timezone }, at) {
      await call('digest_record_schedule_start', { p_cron: cron, p_timezone: timezone, p_at: at.toISOString() });
    },
    async scheduleInForce(at) {
      const answer = json(await call('digest_schedule_in_force', { p_at: at.toISOString() }));
      return answer === null || answer === undefined ? null : z.object({ cron: z.string(), timezone: z.string() }).parse(answer);
    },
  };
}
