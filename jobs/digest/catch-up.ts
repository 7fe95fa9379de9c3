// Missed Mondays (DIGEST_CATCHUP_HOURS): node-cron only fires future ticks, so a tick that fell
// while no server ran (a deploy across 09:00, a crash loop, a host reboot) would be lost without a
// word. When a server starts, or node-cron reports a missed execution after the process was
// frozen, this finds the newest tick, asks the run history whether a scheduled run began at or after
// it, and if none did, claims the tick in the database (one server wins, ever) and either runs it
// now, marked late, or, past the deadline, tells the operator once what was missed and how to send
// it by hand. The recap's freshness is still the run's own rule (recap.ts).
import cron from 'node-cron';
import type { Recap } from '../../content/schema.ts';
import type { Logger } from '../../server/http/logger.ts';
import type { DigestRun, DigestStore } from '../../server/store/types.ts';
import { NOTICE_SUBJECT_PREFIX, type Notice } from './notices.ts';
import { chooseRecap } from './recap.ts';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
/** A run whose clock started this much before its tick still counts for it (a timer a hair early). */
const EARLY_SLACK_MS = 5_000;

/**
 * The newest tick of a cron expression at or before `now`, searched back at most `lookbackMs`.
 * Every time zone's offset is a whole number of quarter hours, so a UTC minute can only be a tick
 * when it equals one of the expression's minutes modulo 15: only those are matched (a weekly
 * expression costs ~700 matches over a week, not 10,080).
 */
export function lastTickAtOrBefore(expression: string, timeZone: string, now: Date, lookbackMs: number): Date | null {
  const task = cron.createTask(expression, () => {}, { timezone: timeZone });
  const parsed = cron.parse(expression);
  const seconds = [...parsed.second].sort((a, b) => b - a);
  const quarterMinutes = new Set(parsed.minute.map((minute) => minute % 15));
  try {
    const oldest = now.getTime() - lookbackMs;
    for (let minute = Math.floor(now.getTime() / MINUTE_MS) * MINUTE_MS; minute >= oldest - MINUTE_MS; minute -= MINUTE_MS) {
      if (!quarterMinutes.has((minute / MINUTE_MS) % 15)) continue;
      for (const second of seconds) {
        const at = new Date(minute + second * 1000);
        if (at.getTime() <= now.getTime() && at.getTime() >= oldest && task.match(at)) return at;
      }
    }
    return null;
  } finally {
    void task.destroy();
  }
}

/** Whether a scheduled run (on time, resumed or late) began at or after the tick. */
export const ranFor = (runs: readonly DigestRun[], tick: Date) =>
  runs.some((run) => run.kind === 'scheduled' && run.startedAt.getTime() >= tick.getTime() - EARLY_SLACK_MS);

const utc = (date: Date) => `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

function hoursText(ms: number): string {
  const hours = ms / HOUR_MS;
  if (hours < 1) return `${Math.max(1, Math.round(ms / MINUTE_MS))} min`;
  return hours < 48 ? `${hours.toFixed(1)} h` : `${(hours / 24).toFixed(1)} days`;
}

export interface CatchUpOptions {
  cron: string;
  timezone: string;
  freshnessDays: number;
  /** DIGEST_CATCHUP_HOURS; 0 turns catching up off. */
  catchUpHours: number;
  store: Pick<DigestStore, 'recentDigestRuns' | 'claimDigestTick' | 'countDeliveries'>;
  recaps: readonly Recap[];
  holder: string;
  now: Date;
}

export type CatchUp =
  | { action: 'none' }
  /** A scheduled run began for the newest tick (on time, or another server's late run). */
  | { action: 'ran'; tick: Date }
  /** Missed, but another server (or an earlier start of this one) claimed it first. */
  | { action: 'claimed-elsewhere'; tick: Date }
  /** Run now; `prefix` goes before the run's message in its report, history and notice. */
  | { action: 'run-late'; tick: Date; prefix: string }
  | { action: 'tell-missed'; tick: Date; notice: Notice };

/** What to do about the newest tick: nothing, run it late, or tell the operator it was missed. */
export async function catchUpMissedTick(options: CatchUpOptions): Promise<CatchUp> {
  const { now, catchUpHours } = options;
  if (catchUpHours <= 0) return { action: 'none' };
  // A tick is looked for over the last week at most (10,080 minutes, checked once at start-up):
  // DIGEST_CRON is a weekly schedule, and the recap is sent on schedule only while it is fresh.
  const lookbackMs = Math.min(options.freshnessDays, 7) * 24 * HOUR_MS;
  const tick = lastTickAtOrBefore(options.cron, options.timezone, now, lookbackMs);
  if (!tick) return { action: 'none' };
  if (ranFor(await options.store.recentDigestRuns(20), tick)) return { action: 'ran', tick };
  const ageMs = now.getTime() - tick.getTime();
  const late = ageMs <= catchUpHours * HOUR_MS;
  const chosen = chooseRecap({ recaps: options.recaps, publication: { now, timeZone: options.timezone }, scheduled: true, preview: false, freshnessDays: options.freshnessDays });
  // Past the deadline with no fresh public week, or one already sent by hand, nothing was lost.
  if (!late && ('refused' in chosen || (await options.store.countDeliveries(chosen.recap.date)) > 0)) return { action: 'none' };
  if (!(await options.store.claimDigestTick(tick, options.holder))) return { action: 'claimed-elsewhere', tick };
  if (late) {
    return { action: 'run-late', tick, prefix: `Late: the ${utc(tick)} run was missed (no server was running then) and ran ${hoursText(ageMs)} later, when a server started: ` };
  }
  const week = 'refused' in chosen ? 'the newest recap' : `the ${chosen.recap.date} recap`;
  return {
    action: 'tell-missed',
    tick,
    notice: {
      subject: `${NOTICE_SUBJECT_PREFIX} Missed: the ${utc(tick)} run, ${week} not sent`,
      text: [
        `The scheduled run of ${utc(tick)} was missed: no server was running then.`,
        `A server started ${hoursText(ageMs)} later, past DIGEST_CATCHUP_HOURS (${catchUpHours} h), so it was not run late and nothing was sent.`,
        `Send ${week} by hand if it is still worth it: npm run digest -- --dry-run, then npm run digest`,
      ].join('\n'),
    },
  };
}

/** Does what the decision says, and logs it: the run, the notice, or that another server has it. */
export async function actOnMissedTick(
  decision: CatchUp,
  { logger, runLate, tell }: { logger: Pick<Logger, 'info' | 'warn'>; runLate: (prefix: string) => Promise<unknown> | null; tell: (notice: Notice) => Promise<void> },
): Promise<void> {
  if (decision.action === 'run-late') {
    logger.warn(`Weekly digest: the run of ${decision.tick.toISOString()} was missed (no server was running); running it now, marked late`);
    await runLate(decision.prefix);
  } else if (decision.action === 'tell-missed') {
    logger.warn(`Weekly digest: the run of ${decision.tick.toISOString()} was missed and is past DIGEST_CATCHUP_HOURS; not run`);
    await tell(decision.notice);
  } else if (decision.action === 'ran') {
    logger.info(`Weekly digest: the run of ${decision.tick.toISOString()} was held; nothing to catch up`);
  } else if (decision.action === 'claimed-elsewhere') {
    logger.info(`Weekly digest: the missed run of ${decision.tick.toISOString()} was already taken up by another server or an earlier start`);
  }
}
