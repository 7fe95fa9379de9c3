// Missed Mondays (DIGEST_CATCHUP_HOURS): a tick that fell while no server ran (a deploy across
// 09:00, a crash loop, a host reboot) would be lost without a word. When a server starts (or its
// timer fires long after the tick, the process having been frozen), this reads the record of ticks
// (digest_ticks) for the newest tick of DIGEST_CRON and decides:
// - recorded and running (or a tick of a DIGEST_CRON since changed, running the same week): its
//   holder is alive and renewing, or dead, and then it is taken over once its lease has passed (the
//   scheduler watches it);
// - recorded otherwise: it was dealt with (done, told missed, or its week handed to a newer tick);
// - not recorded, but its week was sent or told missed (by a tick of a DIGEST_CRON since moved), or
//   sent by hand, or no fresh week was public at it, or servers were running another DIGEST_CRON
//   when it fell (digest_schedule_starts): nothing was lost, or the operator knows;
// - otherwise missed: run it now, marked late, within DIGEST_CATCHUP_HOURS and the recap's
//   freshness; past that, record it as missed (one server wins) and tell the operator once, with
//   the tick before it when that was missed too (a server down for more than a week).
// When DIGEST_CRON changed while no server ran, the newest tick may be the old schedule's: that one
// is checked, as its servers would have run it.
import type { Recap } from '../../content/schema.ts';
import type { DigestSchedule, DigestStore, DigestTick } from '../../server/store/types.ts';
import { lastTickAtOrBefore } from './cron-time.ts';
import { NOTICE_SUBJECT_PREFIX, type Notice } from './notices.ts';
import { chooseRecap } from '../../server/mail/digest/recap.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

export { lastTickAtOrBefore };

export const utc = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

export function hoursText(ms: number): string {
  const hours = ms / HOUR_MS;
  if (hours < 1) return `${Math.max(1, Math.round(ms / MINUTE_MS))} min`;
  return hours < 48 ? `${hours.toFixed(1)} h` : `${(hours / 24).toFixed(1)} days`;
}

/** Put before a late run's message in its report, history and notice. */
export const latePrefix = (tick: Date, now: Date) =>
  `Late: the ${utc(tick)} run was missed (no server was running then) and ran ${hoursText(now.getTime() - tick.getTime())} later, when a server started: `;

export interface CatchUpOptions {
  cron: string;
  timezone: string;
  freshnessDays: number;
  /** DIGEST_CATCHUP_HOURS; 0: a missed tick is neither run late nor told. */
  catchUpHours: number;
  store: Pick<DigestStore, 'digestTicksSince' | 'countDeliveries' | 'scheduleInForce'>;
  recaps: readonly Recap[];
  now: Date;
}

export type CatchUp =
  | { action: 'none' }
  /** The tick was dealt with, or its week sent: nothing to catch up. */
  | { action: 'held'; tick: Date }
  /** A holder claimed it and has not settled it: alive (renewing) or dead (taken over once its lease has passed). */
  | { action: 'watch'; tick: Date; leaseUntil: Date; late: boolean }
  /** Run now, marked late; `older`: the tick before it, missed too and past its deadline. */
  | { action: 'run-late'; tick: Date; older: Date | null }
  /** Record as missed and tell, with `older` when it was missed too. */
  | { action: 'tell-missed'; tick: Date; older: Date | null };

/** The week a run at `at` would send on schedule, or null when none is public and fresh then. */
function weekAt(options: Pick<CatchUpOptions, 'recaps' | 'timezone' | 'freshnessDays'>, at: Date): string | null {
  const chosen = chooseRecap({ recaps: options.recaps, publication: { now: at, timeZone: options.timezone }, scheduled: true, preview: false, freshnessDays: options.freshnessDays });
  return 'refused' in chosen ? null : chosen.recap.date;
}

/**
 * Whether an unrecorded tick lost nothing: no fresh week then, or that week dealt with already
 * (deliveries, or a settled tick of this or an earlier DIGEST_CRON that sent it or told it missed).
 */
async function weekServed(options: CatchUpOptions, tick: Date, ticks: readonly DigestTick[]): Promise<boolean> {
  const week = weekAt(options, tick);
  if (week === null) return true;
  if (ticks.some((row) => row.state !== 'running' && (row.recapDate ?? weekAt(options, row.tick)) === week)) return true;
  return (await options.store.countDeliveries(week)) > 0;
}

const sameSchedule = (a: DigestSchedule, b: DigestSchedule) => a.cron === b.cron && a.timezone === b.timezone;

/** Whether the newest recorded start at or before `tick` ran a schedule other than this one. */
async function ranAnotherSchedule(options: CatchUpOptions, tick: Date): Promise<boolean> {
  const inForce = await options.store.scheduleInForce(tick);
  return inForce !== null && !sameSchedule(inForce, options);
}

/**
 * The schedule whose newest tick is checked: this server's, unless another was in force when this
 * schedule's newest tick fell (DIGEST_CRON changed while no server ran) and that schedule has a tick
 * of its own while it was still in force: that tick was the week's, as its servers would have run
 * it (moved from Tuesday to Monday over a weekend down, Tuesday's tick; moved an hour later while
 * down over the earlier one, the earlier one). Read at this schedule's tick, not just before now: a
 * server of the new schedule that started since and died leaves its start recorded, which must not
 * hide the old schedule's missed tick.
 */
async function scheduleOfNewestTick(options: CatchUpOptions): Promise<DigestSchedule> {
  const own = { cron: options.cron, timezone: options.timezone };
  const lookbackMs = Math.min(options.freshnessDays, 7) * DAY_MS;
  const ours = lastTickAtOrBefore(own.cron, own.timezone, options.now, lookbackMs);
  const before = await options.store.scheduleInForce(ours ?? new Date(options.now.getTime() - 1));
  if (!before || sameSchedule(before, own)) return own;
  const theirs = lastTickAtOrBefore(before.cron, before.timezone, options.now, lookbackMs);
  if (!theirs) return own;
  const inForceAtTheirs = await options.store.scheduleInForce(theirs);
  return inForceAtTheirs && sameSchedule(inForceAtTheirs, before) ? before : own;
}

/** What to do about the newest tick at start-up (see the top of this file). */
export async function catchUpMissedTick(options: CatchUpOptions): Promise<CatchUp> {
  return decideNewestTick({ ...options, ...(await scheduleOfNewestTick(options)) });
}

async function decideNewestTick(options: CatchUpOptions): Promise<CatchUp> {
  const { now, catchUpHours } = options;
  // A week back at most: DIGEST_CRON is a weekly schedule, and a recap is sent on schedule only while fresh.
  const tick = lastTickAtOrBefore(options.cron, options.timezone, now, Math.min(options.freshnessDays, 7) * DAY_MS);
  if (!tick) return { action: 'none' };
  const before = lastTickAtOrBefore(options.cron, options.timezone, new Date(tick.getTime() - 1), 7 * DAY_MS);
  const ticks = await options.store.digestTicksSince(new Date((before ?? tick).getTime() - 7 * DAY_MS));
  const row = ticks.find((t) => t.tick.getTime() === tick.getTime());
  if (row?.state === 'running') return { action: 'watch', tick, leaseUntil: row.leaseUntil, late: row.late };
  // A tick of the DIGEST_CRON before a change still running this week (its server stopped for the
  // deploy mid-resume): the week is that tick's to finish, so it is watched and taken over.
  const week = row ? null : weekAt(options, tick);
  const earlier = week === null ? undefined : ticks.find((t) => t.state === 'running' && (t.recapDate ?? weekAt(options, t.tick)) === week);
  if (earlier) return { action: 'watch', tick: earlier.tick, leaseUntil: earlier.leaseUntil, late: earlier.late };
  // A tick recorded after it (of the schedule before a DIGEST_CRON change) had servers up and took up its week, told whatever it missed.
  if (ticks.some((t) => t.tick.getTime() > tick.getTime())) return { action: 'held', tick };
  // Servers were running another DIGEST_CRON when it fell (its newest start before the tick was of
  // that schedule): the tick was never this schedule's, and that schedule's servers had its week.
  if (!row && (await ranAnotherSchedule(options, tick))) return { action: 'held', tick };
  if (row || catchUpHours <= 0 || (await weekServed(options, tick, ticks))) return { action: 'held', tick };
  // The tick before counts as missed only when servers ran ticks before it (not on a first start).
  const ranBefore = before !== null && ticks.some((t) => t.tick.getTime() < before.getTime());
  const olderMissed = ranBefore && !ticks.some((t) => t.tick.getTime() === before.getTime()) && !(await weekServed(options, before, ticks));
  const older = olderMissed ? before : null;
  const withinDeadline = now.getTime() - tick.getTime() <= catchUpHours * HOUR_MS;
  if (withinDeadline && weekAt(options, now) !== null) return { action: 'run-late', tick, older };
  return { action: 'tell-missed', tick, older };
}

/** The operator's notice for a missed tick (and the one before it, when that was missed too). */
export function missedNotice(options: Pick<CatchUpOptions, 'catchUpHours' | 'recaps' | 'timezone' | 'freshnessDays' | 'now'>, tick: Date, older: Date | null, why?: string): Notice {
  const chosen = weekAt(options, tick);
  const week = chosen ? `the ${chosen} recap` : 'the newest recap';
  const olderLine = older ? [`The run before it, of ${utc(older)}, was missed too (no server was running then); its recap was not sent either.`] : [];
  return {
    subject: `${NOTICE_SUBJECT_PREFIX} Missed: the ${utc(tick)} run, ${week} not sent${older ? ` (and the ${utc(older)} run)` : ''}`,
    text: [
      `The scheduled run of ${utc(tick)} was missed: no server was running then.`,
      why ?? `A server started ${hoursText(options.now.getTime() - tick.getTime())} later, past DIGEST_CATCHUP_HOURS (${options.catchUpHours} h), so it was not run late and nothing was sent.`,
      ...olderLine,
      `Send ${week} by hand if it is still worth it: npm run digest -- --dry-run, then npm run digest`,
    ].join('\n'),
  };
}

/** The late run's prefix, naming the older tick that was missed too. */
export function latePrefixWithOlder(tick: Date, older: Date | null, now: Date): string {
  const prefix = latePrefix(tick, now);
  return older ? `${prefix.slice(0, -2)}; the ${utc(older)} run was missed too and is past catching up: ` : prefix;
}
