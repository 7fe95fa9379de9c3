// When a scheduled run stops (the provider stayed down past its retry budget, an unexpected error,
// another replica's lease in the way), the scheduler tries again by itself: first after
// DIGEST_RESUME_FIRST_SECONDS (60 s), then twice as long each time up to DIGEST_RESUME_MAX_SECONDS
// (30 min), until a try ends conclusively: the recap is sent (or was), or its freshness window has
// ended ("stale"), or a person must decide (an unknown batch, a failed pre-send check), or the
// tick's week is over (the next tick has come) or a late tick's catch-up deadline has passed
// (resumableTick). A tick whose holder died is taken over by another server or the next start once
// its lease has passed (scheduler.ts). Each try is a run of its own in --history ("Resumed (try
// N): …"); the sending lease keeps it to one sender across replicas. Every wait is a timer of the
// scheduler's Clock.
import type { Clock, TimerHandle } from '../../server/clock.ts';
import type { DigestReport } from '../../server/mail/digest/run-report.ts';
import { nextTickAfter } from './cron-time.ts';

const HOUR_MS = 3_600_000;

export interface ResumePolicy {
  firstMs: number;
  maxMs: number;
}

export const DEFAULT_RESUME_POLICY: ResumePolicy = { firstMs: 60_000, maxMs: 30 * 60_000 };

/** The wait before resume try `attempt` (1, 2, …): first, doubling, up to max. */
export function resumeDelayMs(attempt: number, policy: ResumePolicy): number {
  return Math.min(policy.maxMs, policy.firstMs * 2 ** Math.max(0, attempt - 1));
}

/** A failed pre-send check stops a run with this; trying again cannot help until the content changes. */
const NEEDS_A_PERSON = /(^|: )Nothing sent: /;
const ON_REQUEST = 'stopped on request';

/**
 * Whether a scheduled run left work that a later try can do: it stopped on its own (not on
 * request, which means the process is going away; the next process resumes it), or another
 * holder's lease kept it out (that holder may die; a later try takes over or finds it done).
 */
export function shouldResume(report: Pick<DigestReport, 'outcome' | 'message'>): boolean {
  if (report.outcome === 'locked') return true;
  if (report.outcome !== 'stopped') return false;
  return !NEEDS_A_PERSON.test(report.message) && !report.message.includes(ON_REQUEST);
}

export interface Resumer {
  /** After a scheduled run (attempt 0 from the schedule, N for resume try N): the next try's time, or null when done. */
  afterRun(report: DigestReport, attempt: number): Date | null;
  /** Schedules try `attempt` after `delayMs` (start-up resume, or the next try). */
  scheduleTry(attempt: number, delayMs: number): Date;
  /** Cancels a pending try (the schedule fired anew, or the process stops). */
  cancel(): void;
}

export function createResumer(options: { policy: ResumePolicy; run: (attempt: number) => unknown; clock: Clock }): Resumer {
  let timer: TimerHandle | null = null;
  const cancel = () => {
    timer?.cancel();
    timer = null;
  };
  const scheduleTry = (attempt: number, delayMs: number) => {
    cancel();
    timer = options.clock.setTimer(() => {
      timer = null;
      return options.run(attempt);
    }, delayMs);
    return new Date(options.clock.now().getTime() + delayMs);
  };
  return {
    afterRun(report, attempt) {
      if (!shouldResume(report)) return null;
      return scheduleTry(attempt + 1, resumeDelayMs(attempt + 1, options.policy));
    },
    scheduleTry,
    cancel,
  };
}

export type TickVerdict = { go: true } | { go: false; state: 'abandoned' | 'missed'; why: string };

/**
 * Whether a try may still run for `tick`: not once the next tick has come (its run, on time or
 * late, owns the week now, and a try would send a different week under this tick's name), and for
 * a late tick not past its catch-up deadline (DIGEST_CATCHUP_HOURS from the tick). Freshness is the
 * run's own rule (a stale recap ends it).
 */
export function resumableTick(options: { cron: string; timezone: string; tick: Date; late: boolean; catchUpHours: number; now: Date }): TickVerdict {
  const { tick, now } = options;
  const next = nextTickAfter(options.cron, options.timezone, tick, now.getTime() - tick.getTime() + 1);
  if (next && next.getTime() <= now.getTime()) {
    return { go: false, state: 'abandoned', why: `the next scheduled run (${next.toISOString()}) has come, and that run serves the week now` };
  }
  if (options.late && now.getTime() - tick.getTime() > options.catchUpHours * HOUR_MS) {
    return { go: false, state: 'missed', why: `it is a missed run caught up late, and DIGEST_CATCHUP_HOURS (${options.catchUpHours} h) from its time has passed` };
  }
  return { go: true };
}
