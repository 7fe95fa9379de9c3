// The Monday job inside the server process: at each DIGEST_CRON tick in DIGEST_TZ the scheduler
// claims the tick in the record of ticks and starts its run in one transaction (catch-up.ts reads
// that record), runs the digest, tries a stopped run again (resume.ts), tells the operator
// (notices.ts), and does the daily housekeeping (jobs/housekeeping/housekeep.ts). Every wait is a timer of one
// Clock, so a manual clock runs a week of it in a second. Runs go one at a time through a queue:
// ticks never overlap, in this process (the queue) or across replicas (the tick's claim, then the
// sending lease).
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Recap } from '../../content/schema.ts';
import { systemClock, type Clock, type TimerHandle } from '../../server/clock.ts';
import type { Logger } from '../../server/http/logger.ts';
import { queuedNoticeOf, type NoticeRecipients } from '../../server/mail/operator-notice.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { DigestStore } from '../../server/store/types.ts';
import { catchUpMissedTick, latePrefixWithOlder, missedNotice, type CatchUp } from './catch-up.ts';
import { nextTickAfter } from './cron-time.ts';
import { housekeep, HOUSEKEEPING_CRON } from '../housekeeping/housekeep.ts';
import type { DigestSetup } from './job.ts';
import { DEFAULT_LEASE_MS } from '../../server/mail/digest/lease.ts';
import { logNotice, noticeFor, sendNotice, type Notice } from './notices.ts';
import { reportFields, runFailed } from '../../server/mail/digest/run-report.ts';
import { createResumer, DEFAULT_RESUME_POLICY, resumableTick, type Resumer, type ResumePolicy } from './resume.ts';
import type { DigestReport } from '../../server/mail/digest/run.ts';

export { HOUSEKEEPING_CRON };

export interface SchedulerOptions {
  cron: string;
  timezone: string;
  freshnessDays: number;
  store: DigestStore;
  mailer: Mailer;
  recaps: readonly Recap[];
  siteUrl: string;
  unsubscribeSecret: string;
  /** NODE_ENV=production, for the pre-send checks. */
  production?: boolean;
  logger: Logger;
  /** Tells the time and sets every timer (ticks, tries, housekeeping); the system clock by default. */
  clock?: Clock;
  /** DIGEST_RESUME_FIRST_SECONDS / DIGEST_RESUME_MAX_SECONDS. */
  resume?: ResumePolicy;
  /** OPERATOR_EMAIL: where the notices go (the log has them either way). */
  operatorEmail?: string;
  /** NOTICE_WEBHOOK_URL is set: the notices are posted there too. */
  noticeWebhook?: boolean;
  /** Look at start-up for a tick whose holder died, and take it over once its lease has passed (default true). */
  resumeInterrupted?: boolean;
  /**
   * DIGEST_CATCHUP_HOURS: at start-up (and when a tick's timer fires long after the tick) run a
   * missed tick late if it is at most this old (catch-up.ts); 0 or absent: never.
   */
  catchUpHours?: number;
  /** RETENTION_DAYS: what the daily housekeeping prunes. */
  retentionDays?: number;
  /** DIGEST_LEASE_SECONDS, in ms: how long a dead holder keeps a tick (and a recap's sending lease). */
  leaseMs?: number;
  /** This process's name in the record of ticks (host/pid/random by default). */
  holder?: string;
  /** Waits between a run's tries to record a batch's answer; a real wait by default. */
  pause?: (ms: number) => Promise<void>;
}

export interface DigestScheduler {
  /** When the next tick fires, if the schedule has one. */
  nextRun(): Date | null;
  /** Runs a tick now (keyed by this instant), as the timer would; resolves with its report (null when not run). */
  runNow(): Promise<DigestReport | null>;
  /** When the scheduler tries a stopped run again, if it will. */
  nextResume(): Date | null;
  /** When the daily housekeeping runs next. */
  nextHousekeeping(): Date | null;
  /** Runs the daily housekeeping now, as its timer would. */
  housekeepNow(): Promise<void>;
  /** Resolves once the work queued so far (the start-up check, runs, tries) has ended. */
  idle(): Promise<void>;
  /**
   * Stops the schedule and asks a run in progress to stop after its current batch; resolves once
   * that batch has been accepted or refused and recorded. The tick stays claimed until its lease
   * passes, and then the next process takes it over.
   */
  stop(): Promise<void>;
}

/** A timer fires this much after its tick at most and still counts as on time (a busy or suspended host). */
const ON_TIME_MS = 60_000;

/** A run's line in the log, with the fields the run history keeps (npm run digest -- --history). */
function logRun(logger: Logger, report: DigestReport, attempt: number) {
  const fields = { attempt, ...reportFields(report) };
  if (runFailed(report)) logger.error(fields, `Weekly digest: ${report.message}`);
  else logger.info(fields, `Weekly digest: ${report.message}`);
}

/** The tick this process holds, while its run goes or waits for a try. */
interface HeldTick {
  tick: Date;
  late: boolean;
  attempt: number;
  /** Whether the operator was told of its current stop. */
  stopNoticed: boolean;
  /** Put after "Resumed (try N): " for a late tick's tries. */
  older: Date | null;
}

/** A timer that re-arms itself at each next instant of a cron expression. */
function cronTimer(clock: Clock, expression: string, timezone: string, fire: (at: Date) => unknown) {
  let handle: TimerHandle | null = null;
  let next: Date | null = null;
  const arm = () => {
    next = nextTickAfter(expression, timezone, clock.now());
    if (!next) return;
    const at = next;
    handle = clock.setTimer(() => {
      arm();
      return fire(at);
    }, at.getTime() - clock.now().getTime());
  };
  arm();
  return { next: () => next, cancel: () => handle?.cancel() };
}

/** The scheduler's state and steps; startDigestScheduler wires its timers and answers the interface. */
class TickScheduler {
  readonly clock: Clock;
  readonly stopping = new AbortController();
  readonly watches = new Set<TimerHandle>();
  readonly resumer: Resumer;
  private readonly leaseMs: number;
  private readonly catchUpHours: number;
  private readonly holder: string;
  private readonly setup: DigestSetup;
  private readonly logger: Logger;
  private readonly store: DigestStore;
  held: HeldTick | null = null;
  nextResume: Date | null = null;
  queue: Promise<unknown> = Promise.resolve();
  nextRun: () => Date | null = () => null;

  constructor(private readonly options: SchedulerOptions) {
    this.logger = options.logger;
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.catchUpHours = options.catchUpHours ?? 0;
    this.holder = options.holder ?? `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
    // The sending lease keeps the database's clock: a CLI run beside this scheduler takes and checks
    // the same lease by the database's now(), and the two must agree on when it expires.
    this.setup = { ...options, production: options.production ?? false, log: this.log, leaseMs: this.leaseMs, clock: undefined };
    this.resumer = createResumer({ policy: this.policy, run: (attempt) => this.tryAgain(attempt), clock: this.clock });
  }

  get policy(): ResumePolicy {
    return this.options.resume ?? DEFAULT_RESUME_POLICY;
  }

  readonly log = { info: (line: string) => this.logger.info(line), warn: (line: string) => this.logger.warn(line) };

  get recipients(): NoticeRecipients {
    return { email: this.options.operatorEmail, webhook: this.options.noticeWebhook };
  }

  tell(notice: Notice) {
    return sendNotice(this.store, this.recipients, notice, this.log);
  }

  housekeep() {
    return housekeep({ store: this.store, retentionDays: this.options.retentionDays, log: this.log, now: this.clock.now() });
  }

  /** One job at a time, in the order asked: ticks, tries and checks never overlap. */
  enqueue<T>(job: () => Promise<T>): Promise<T | null> {
    const next = this.queue.then(() => (this.stopping.signal.aborted ? null : job()));
    const guarded = next.catch((error: unknown) => {
      this.logger.error({ err: error }, 'Weekly digest run failed');
      return null;
    });
    this.queue = guarded;
    return guarded;
  }

  private verdict(tick: Date, late: boolean) {
    return resumableTick({ cron: this.options.cron, timezone: this.options.timezone, tick, late, catchUpHours: this.catchUpHours, now: this.clock.now() });
  }

  private missed(tick: Date, older: Date | null, why?: string) {
    return missedNotice({ ...this.options, catchUpHours: this.catchUpHours, now: this.clock.now() }, tick, older, why);
  }

  /** Runs the claimed tick's run, keeping its claim alive meanwhile; then the next try or the tick's end, and the notice. */
  private async runClaimed(tick: HeldTick, runId: string): Promise<DigestReport> {
    const now = new Date(Math.max(this.clock.now().getTime(), tick.tick.getTime()));
    const late = tick.late ? latePrefixWithOlder(tick.tick, tick.older, now) : '';
    const messagePrefix = tick.attempt > 0 ? `Resumed (try ${tick.attempt}): ${late}` : late || undefined;
    let renewal: TimerHandle | null = null;
    const renew = () => {
      renewal = this.clock.setTimer(async () => {
        await this.store.renewDigestTick(tick.tick, this.holder, new Date(this.clock.now().getTime() + this.leaseMs)).catch(() => {});
        renew();
      }, this.leaseMs / 3);
    };
    renew();
    let report: DigestReport;
    try {
      // The job and its e-mail renderer are loaded by the first run, not with the server.
      const { runDigestJob } = await import('./job.ts');
      ({ report } = await runDigestJob(this.setup, { mode: 'scheduled', now, signal: this.stopping.signal, messagePrefix, runId }));
    } finally {
      renewal!.cancel();
    }
    logRun(this.logger, report, tick.attempt);
    await this.afterRun(tick, report);
    return report;
  }

  /** The next try (keeping the claim until then) or the tick's end, and the operator's notice. */
  private async afterRun(tick: HeldTick, report: DigestReport) {
    const stopping = this.stopping.signal.aborted;
    this.nextResume = stopping ? null : this.resumer.afterRun(report, tick.attempt);
    if (this.nextResume) {
      this.logger.warn(`Weekly digest: trying again at ${this.nextResume.toISOString()} (try ${tick.attempt + 1}), with no command needed`);
      await this.store.renewDigestTick(tick.tick, this.holder, new Date(this.nextResume.getTime() + this.leaseMs)).catch(() => {});
    }
    const notice = await noticeFor(this.store, report, { attempt: tick.attempt, nextTry: this.nextResume, nextRun: this.nextRun(), stopNoticed: tick.stopNoticed, late: tick.late });
    if (!this.nextResume && !stopping) {
      // Stopped on request, the tick stays claimed until its lease passes: the next process takes it over.
      this.held = null;
      if (await this.endTick(tick.tick, 'done', report.recap?.date ?? null, notice)) return;
    }
    if (notice) await this.tell(notice);
    if (notice && this.nextResume) tick.stopNoticed = true;
  }

  /**
   * Settles a tick with the operator's notice its end deserves, queued in the same statement: a
   * process that dies in between leaves the tick running (the next server takes it over), never
   * settled and untold. False when another server settled it.
   */
  private async endTick(tick: Date, state: 'done' | 'missed' | 'abandoned', recapDate: string | null, notice?: Notice | null): Promise<boolean> {
    const queued = notice ? queuedNoticeOf(this.recipients, notice) : null;
    const settled = await this.store.endDigestTick({ tick, holder: this.holder, now: this.clock.now(), state, recapDate, notice: queued });
    if (settled && notice) logNotice(notice, this.log);
    return settled;
  }

  /** Claims the tick (with its run) and runs it; null when another server holds or settled it. */
  async claimAndRun(tick: Date, late: boolean, older: Date | null = null): Promise<DigestReport | null> {
    const claim = await this.store.beginDigestTick({ tick, holder: this.holder, now: this.clock.now(), leaseMs: this.leaseMs, late });
    if (!claim) {
      this.logger.info(`Weekly digest: the run of ${tick.toISOString()} is another server's (it runs it, or it is settled)`);
      await this.watch(tick);
      return null;
    }
    if (this.held && this.held.tick.getTime() !== tick.getTime()) await this.settle(this.held, 'abandoned', 'a newer scheduled run began');
    this.resumer.cancel();
    this.nextResume = null;
    this.held = { tick, late: claim.late, attempt: claim.takenOver ? 1 : 0, stopNoticed: false, older };
    if (claim.takenOver) this.logger.warn(`Weekly digest: the run of ${tick.toISOString()} was left unfinished by a server that stopped renewing it; taking it over`);
    else if (claim.late) this.logger.warn(`Weekly digest: claimed the missed run of ${tick.toISOString()}; running it now, marked late`);
    return this.runClaimed(this.held, claim.runId);
  }

  /** Ends a tick this process holds without another try, and says why. */
  private async settle(tick: HeldTick, state: 'abandoned' | 'missed', why: string, notice?: Notice) {
    this.held = null;
    this.nextResume = null;
    this.resumer.cancel();
    this.logger.warn(`Weekly digest: the run of ${tick.tick.toISOString()} is not tried again: ${why}`);
    await this.endTick(tick.tick, state, null, notice);
  }

  /** Resume try `attempt` of the held tick: still worth it, then a new run under the same claim. */
  private tryAgain(attempt: number) {
    return this.enqueue(async () => {
      const tick = this.held;
      if (!tick) return null;
      this.nextResume = null;
      const verdict = this.verdict(tick.tick, tick.late);
      if (!verdict.go) {
        const notice = verdict.state === 'missed' ? this.missed(tick.tick, tick.older, `Its late run stopped and was not finished in time: ${verdict.why}.`) : undefined;
        await this.settle(tick, verdict.state, verdict.why, notice);
        return null;
      }
      const claim = await this.store.beginDigestTick({ tick: tick.tick, holder: this.holder, now: this.clock.now(), leaseMs: this.leaseMs, late: tick.late });
      if (!claim) {
        this.held = null;
        this.logger.info(`Weekly digest: the run of ${tick.tick.toISOString()} was taken over or settled by another server; not trying again here`);
        return null;
      }
      tick.attempt = attempt;
      return this.runClaimed(tick, claim.runId);
    });
  }

  /**
   * Another holder's running tick: look again when its lease passes. Alive, it has renewed it (look
   * again later); dead, this server takes it over as a resume try, if still worth it.
   */
  private async watch(tick: Date) {
    if (!(this.options.resumeInterrupted ?? true) || this.stopping.signal.aborted) return;
    const row = (await this.store.digestTicksSince(tick)).find((t) => t.tick.getTime() === tick.getTime());
    if (row?.state !== 'running') return;
    const waitMs = Math.max(row.leaseUntil.getTime() - this.clock.now().getTime(), 0) + Math.min(this.policy.firstMs, this.leaseMs);
    const handle = this.clock.setTimer(() => {
      this.watches.delete(handle);
      return this.enqueue(() => this.takeOver(tick, row.late));
    }, waitMs);
    this.watches.add(handle);
  }

  private async takeOver(tick: Date, late: boolean): Promise<DigestReport | null> {
    const verdict = this.verdict(tick, late);
    if (verdict.go) return this.claimAndRun(tick, late);
    const notice = verdict.state === 'missed' ? this.missed(tick, null, `Its late run was left unfinished and could not be resumed in time: ${verdict.why}.`) : null;
    if (!(await this.endTick(tick, verdict.state, null, notice))) {
      await this.watch(tick);
      return null;
    }
    this.logger.warn(`Weekly digest: the unfinished run of ${tick.toISOString()} is not resumed: ${verdict.why}`);
    return null;
  }

  /** Records this server's DIGEST_CRON as in force from its start (a failure is only logged: catch-up reads what there is). */
  async recordStart(at: Date) {
    try {
      await this.store.recordScheduleStart({ cron: this.options.cron, timezone: this.options.timezone }, at);
    } catch (error) {
      this.logger.warn({ err: error }, 'Weekly digest: could not record this server’s schedule');
    }
  }

  /**
   * At start-up, or when a tick's timer fired long after it: the newest tick at `at` (when it was
   * asked, not when its turn in the queue came, so a tick that fires meanwhile is left to its timer).
   */
  async checkNewestTick(at: Date): Promise<DigestReport | null> {
    let decision: CatchUp;
    try {
      decision = await catchUpMissedTick({ ...this.options, catchUpHours: this.catchUpHours, store: this.store, now: at });
    } catch (error) {
      this.logger.warn({ err: error }, 'Weekly digest: could not check for a missed or unfinished run');
      return null;
    }
    return this.actOn(decision);
  }

  private async actOn(decision: CatchUp): Promise<DigestReport | null> {
    const { logger, store, holder } = this;
    if (decision.action === 'watch') {
      logger.warn(`Weekly digest: the run of ${decision.tick.toISOString()} is unfinished; it is taken over after ${decision.leaseUntil.toISOString()} unless its server renews it`);
      await this.watch(decision.tick);
    } else if (decision.action === 'run-late') {
      logger.warn(`Weekly digest: the run of ${decision.tick.toISOString()} was missed (no server was running); claiming it`);
      if (decision.older) await store.recordMissedDigestTick(decision.older, holder, this.clock.now());
      return this.claimAndRun(decision.tick, true, decision.older);
    } else if (decision.action === 'tell-missed') {
      logger.warn(`Weekly digest: the run of ${decision.tick.toISOString()} was missed and is past DIGEST_CATCHUP_HOURS; not run`);
      // The record and the notice in one statement: a server dying right after recording the tick
      // cannot leave it recorded and never told, since every later start reads it as dealt with.
      const notice = this.missed(decision.tick, decision.older);
      const recorded = await store.recordMissedDigestTick(decision.tick, holder, this.clock.now(), queuedNoticeOf(this.recipients, notice));
      if (decision.older) await store.recordMissedDigestTick(decision.older, holder, this.clock.now());
      if (recorded) logNotice(notice, this.log);
      else logger.info(`Weekly digest: the missed run of ${decision.tick.toISOString()} was already told by another server or an earlier start`);
    } else if (decision.action === 'held') {
      logger.info(`Weekly digest: the run of ${decision.tick.toISOString()} was held; nothing to catch up`);
    }
    return null;
  }

  /** A tick's timer: on time, claim and run it; long after it (a frozen process), decide as at start-up. */
  onTick(at: Date) {
    const now = this.clock.now();
    return this.enqueue(() => (now.getTime() - at.getTime() > ON_TIME_MS && this.catchUpHours > 0 ? this.checkNewestTick(now) : this.claimAndRun(at, false)));
  }

  /** Resolves once the queue is empty, including work queued while waiting. */
  async idle() {
    for (let seen: Promise<unknown> | null = null; seen !== this.queue; ) {
      seen = this.queue;
      await seen;
    }
  }
}

export function startDigestScheduler(options: SchedulerOptions): DigestScheduler {
  const scheduler = new TickScheduler(options);
  const { clock, stopping } = scheduler;
  const ticks = cronTimer(clock, options.cron, options.timezone, (at) => scheduler.onTick(at));
  scheduler.nextRun = ticks.next;
  const housekeeping = cronTimer(clock, HOUSEKEEPING_CRON, options.timezone, () => (stopping.signal.aborted ? undefined : scheduler.housekeep()));
  const startedAt = clock.now();
  void scheduler.enqueue(async () => {
    await scheduler.recordStart(startedAt);
    return scheduler.checkNewestTick(startedAt);
  });

  return {
    nextRun: () => ticks.next(),
    runNow: () => scheduler.enqueue(() => scheduler.claimAndRun(clock.now(), false)),
    nextResume: () => scheduler.nextResume,
    nextHousekeeping: () => housekeeping.next(),
    housekeepNow: () => scheduler.housekeep(),
    idle: () => scheduler.idle(),
    async stop() {
      stopping.abort();
      scheduler.resumer.cancel();
      ticks.cancel();
      housekeeping.cancel();
      for (const handle of scheduler.watches) handle.cancel();
      await scheduler.idle();
    },
  };
}
