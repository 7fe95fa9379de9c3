// When a scheduled run stops (the provider stayed down past its retry budget, an unexpected error,
// another replica's lease in the way), the scheduler tries again by itself: first after
// DIGEST_RESUME_FIRST_SECONDS (60 s), then twice as long each time up to DIGEST_RESUME_MAX_SECONDS
// (30 min), until a try ends conclusively: the recap is sent (or was), or its freshness window has
// ended ("stale"), or a person must decide (an unknown batch, a failed pre-send check). A process
// that starts after a crash or a deploy looks once at the last scheduled run and resumes it when it
// did not end conclusively. Each try is a run of its own in --history ("Resumed (try N): …"); the
// sending lease keeps it to one sender across replicas. Idle, this costs no query at all.
import type { DigestRun, DigestStore } from '../../server/store/types.ts';
import type { DigestReport } from './report.ts';

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

/**
 * At start-up: whether the last scheduled run (newest first in `runs`) ended without a conclusion,
 * i.e. was killed (no outcome), stopped, or was locked out; the caller then resumes it.
 */
export function interruptedScheduledRun(runs: readonly DigestRun[]): DigestRun | null {
  const last = runs.find((run) => run.kind === 'scheduled');
  if (!last) return null;
  if (last.outcome === null) return last;
  const report = { outcome: last.outcome as DigestReport['outcome'], message: last.message ?? '' };
  // Stopped on request: its process was going away (a deploy); this one takes over.
  return shouldResume(report) || (report.outcome === 'stopped' && report.message.includes(ON_REQUEST)) ? last : null;
}

/**
 * Right before the start-up resume's try: whether the last scheduled run is still unfinished. A run
 * that looked cut short at start-up may have been another server's, alive and finishing (replicas
 * started together after a missed tick); then there is nothing to resume and no run is added.
 */
export async function stillInterrupted(store: Pick<DigestStore, 'recentDigestRuns'>, log: { info(line: string): void }): Promise<boolean> {
  try {
    if (interruptedScheduledRun(await store.recentDigestRuns(10))) return true;
  } catch {
    return true; // The try itself reports a database that cannot be read.
  }
  log.info('Weekly digest: the scheduled run this server meant to resume finished meanwhile (another server ran it); nothing to resume');
  return false;
}

export interface Resumer {
  /** After a scheduled run (attempt 0 from the schedule, N for resume try N): the next try's time, or null when done. */
  afterRun(report: DigestReport, attempt: number): Date | null;
  /** Schedules try `attempt` after `delayMs` (start-up resume, or the next try). */
  scheduleTry(attempt: number, delayMs: number): Date;
  /** Cancels a pending try (the schedule fired anew, or the process stops). */
  cancel(): void;
}

export function createResumer(options: { policy: ResumePolicy; run: (attempt: number) => void; now?: () => number }): Resumer {
  const now = options.now ?? Date.now;
  let timer: NodeJS.Timeout | null = null;
  const cancel = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  const scheduleTry = (attempt: number, delayMs: number) => {
    cancel();
    timer = setTimeout(() => {
      timer = null;
      options.run(attempt);
    }, delayMs);
    timer.unref();
    return new Date(now() + delayMs);
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
