// One server process of the simulation, as the Monday runs inside it: at start-up the resume of an
// interrupted run and the catch-up of a missed tick, then DIGEST_CRON's ticks, the resume tries
// after a stop, the notices, and the outbox worker's polls; every wait on the simulation's clock.
// It composes the same parts jobs/digest/scheduler.ts composes (today's scheduler waits on node-cron
// and setTimeout, which a manual clock cannot move); once startDigestScheduler takes a Clock, this
// file is where it replaces them, and nothing else in the simulation changes.
import cron from 'node-cron';
import type { Clock, TimerHandle } from '../../server/clock.ts';
import type { Logger } from '../../server/http/logger.ts';
import { createOutboxWorker, type OutboxWorker } from '../../server/mail/outbox-worker.ts';
import type { ComposeMail } from '../../server/mail/subscriber-mail.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { Store } from '../../server/store/types.ts';
import type { Recap } from '../../content/schema.ts';
import { actOnMissedTick, catchUpMissedTick } from '../../jobs/digest/catch-up.ts';
import { runDigestJob, type DigestSetup } from '../../jobs/digest/job.ts';
import { NOTICE_SUBJECT_PREFIX, noticeFor, sendNotice, type Notice } from '../../jobs/digest/notices.ts';
import { interruptedScheduledRun, resumeDelayMs, shouldResume, stillInterrupted, type ResumePolicy } from '../../jobs/digest/resume.ts';
import type { DigestReport } from '../../jobs/digest/run.ts';
import type { Trace } from './trace.ts';

export interface ReplicaConfig {
  cron: string;
  timezone: string;
  freshnessDays: number;
  catchUpHours: number;
  resume: ResumePolicy;
  operatorEmail: string;
  /** How often the outbox worker looks for due mail, in simulated time. */
  outboxPollMs: number;
  outboxRetryMaxSeconds: number;
}

export interface ReplicaParts {
  name: string;
  clock: Clock;
  store: Store;
  mailer: Mailer;
  alive: () => boolean;
  recaps: readonly Recap[];
  trace: Trace;
  config: ReplicaConfig;
}

const MINUTE_MS = 60_000;

const DAY_MS = 24 * 60 * MINUTE_MS;
/** Ticks by schedule and day: matching a minute against a cron expression in a time zone is slow. */
const ticksCache = new Map<string, number[]>();

/** The ticks of a cron expression in [from, from + 15 days). */
function ticksFrom(expression: string, timeZone: string, from: number): number[] {
  const key = `${expression}|${timeZone}|${from}`;
  const cached = ticksCache.get(key);
  if (cached) return cached;
  const task = cron.createTask(expression, () => {}, { timezone: timeZone });
  const quarterMinutes = new Set(cron.parse(expression).minute.map((minute) => minute % 15));
  const ticks: number[] = [];
  try {
    for (let minute = from; minute < from + 15 * DAY_MS; minute += MINUTE_MS) {
      if (quarterMinutes.has((minute / MINUTE_MS) % 15) && task.match(new Date(minute))) ticks.push(minute);
    }
  } finally {
    void task.destroy();
  }
  ticksCache.set(key, ticks);
  return ticks;
}

/** The first tick of a cron expression after `after`, within eight days (the schedules here are weekly). */
export function nextTickAfter(expression: string, timeZone: string, after: Date): Date | null {
  const week = Math.floor(after.getTime() / (7 * DAY_MS)) * 7 * DAY_MS;
  const next = ticksFrom(expression, timeZone, week).find((tick) => tick > after.getTime());
  return next === undefined ? null : new Date(next);
}

/** The simulation's mail content: what the worker composes is its business, only its identity matters here. */
export const simulatedCompose: ComposeMail = async (row, from) => {
  if (row.kind === 'operator') {
    const { to, subject, text } = row.payload as { to: string; subject: string; text: string };
    return { kind: 'send', message: { to, from, subject, text, html: text, headers: {}, tags: { kind: 'operator' } } };
  }
  if (row.email === null || row.subscriberId === null) return { kind: 'cancel', reason: 'the subscriber was deleted before it went out' };
  const subject = `${row.kind} for subscriber ${row.subscriberId}`;
  return { kind: 'send', message: { to: row.email, from, subject, text: subject, html: subject, headers: {}, tags: { kind: row.kind } } };
};

export class SimReplica {
  private readonly timers = new Set<TimerHandle>();
  private readonly stopping = new AbortController();
  private readonly worker: OutboxWorker;
  private readonly setup: DigestSetup;
  private readonly logger: Pick<Logger, 'info' | 'warn'>;
  private running = false;
  private nextResume: TimerHandle | null = null;
  private recheckFirst = false;
  private stopNoticed = false;
  private readonly holder: string;

  constructor(private readonly parts: ReplicaParts) {
    const { name, store, mailer, recaps, trace, config } = parts;
    this.holder = `sim/${name}`;
    const line = (level: string) => (first: unknown, second?: unknown) => {
      if (!parts.alive()) return; // A killed process writes nothing more.
      const text = typeof first === 'string' ? first : typeof second === 'string' ? second : JSON.stringify(first);
      if (text.startsWith(NOTICE_SUBJECT_PREFIX)) {
        const [subject = '', ...rest] = text.split('\n');
        trace.notice(name, subject, rest.join('\n'));
      } else if (text.startsWith('outbox: The mail provider refused the sender')) {
        trace.notice(name, 'HELD', text);
      } else trace.add(name, `${level} ${text.split('\n')[0]!.slice(0, 220)}`);
    };
    this.logger = { info: line('info'), warn: line('warn') } as unknown as Pick<Logger, 'info' | 'warn'>;
    const log = { info: line('info'), warn: line('warn') } as { info(l: string): void; warn(l: string): void };
    this.setup = { store, mailer, recaps, siteUrl: 'https://launched.test', unsubscribeSecret: 'simulation-secret', freshnessDays: config.freshnessDays, timezone: config.timezone, production: false, log };
    this.worker = createOutboxWorker({
      store,
      mailer: async () => mailer,
      compose: simulatedCompose,
      log,
      operatorEmail: config.operatorEmail,
      retryMaxSeconds: config.outboxRetryMaxSeconds,
    });
  }

  get name(): string {
    return this.parts.name;
  }

  private later(run: () => Promise<unknown>, ms: number): TimerHandle {
    const handle = this.parts.clock.setTimer(async () => {
      this.timers.delete(handle);
      if (this.parts.alive() && !this.stopping.signal.aborted) await run();
    }, ms);
    this.timers.add(handle);
    return handle;
  }

  /** What a process does when it starts: resume check, catch-up, then the schedule and the outbox. */
  async start(): Promise<void> {
    await this.resumeInterrupted();
    await this.catchUp();
    this.armTick();
    this.armOutbox();
    await this.deliverOutbox();
  }

  /** A deploy's SIGTERM between two steps: nothing is in flight, so it only stops waiting. */
  stop(): void {
    this.stopping.abort();
    for (const timer of this.timers) timer.cancel();
    this.timers.clear();
  }

  async deliverOutbox(): Promise<void> {
    if (this.parts.alive() && !this.stopping.signal.aborted) await this.worker.deliverDue();
  }

  private armOutbox(): void {
    this.later(async () => {
      await this.deliverOutbox();
      this.armOutbox();
    }, this.parts.config.outboxPollMs);
  }

  private armTick(): void {
    const { cron: expression, timezone } = this.parts.config;
    const tick = nextTickAfter(expression, timezone, this.parts.clock.now());
    if (!tick) return;
    this.later(async () => {
      this.armTick();
      await this.run(0, tick);
    }, tick.getTime() - this.parts.clock.now().getTime());
  }

  private async resumeInterrupted(): Promise<void> {
    try {
      const last = interruptedScheduledRun(await this.parts.store.recentDigestRuns(10));
      if (!last || this.running || this.nextResume) return;
      this.recheckFirst = true;
      this.scheduleTry(1, this.parts.config.resume.firstMs);
      this.logger.warn(`Weekly digest: scheduled run ${last.id} did not finish (${last.outcome ?? 'interrupted'}); resuming it`);
    } catch (error) {
      this.logger.warn(`Weekly digest: could not check for an interrupted run at start-up: ${String(error)}`);
    }
  }

  private async catchUp(): Promise<void> {
    const { config, store, recaps, clock } = this.parts;
    try {
      const decision = await catchUpMissedTick({ ...config, store, recaps, holder: this.holder, now: clock.now() });
      await actOnMissedTick(decision, {
        logger: this.logger,
        runLate: (prefix) => this.run(0, undefined, prefix),
        tell: (notice: Notice) => sendNotice(store, config.operatorEmail, notice, this.setup.log),
      });
    } catch (error) {
      this.logger.warn(`Weekly digest: could not check for a missed run: ${String(error)}`);
    }
  }

  private scheduleTry(attempt: number, delayMs: number): void {
    this.nextResume?.cancel();
    this.nextResume = this.later(async () => {
      this.nextResume = null;
      const still = this.recheckFirst ? await stillInterrupted(this.parts.store, this.setup.log) : true;
      this.recheckFirst = false;
      if (still) await this.run(attempt);
    }, delayMs);
  }

  /** As the scheduler's run: `attempt` 0 for a tick (or a late run), N for resume try N. */
  private async run(attempt: number, scheduledFor?: Date, latePrefix?: string): Promise<DigestReport | null> {
    if (!this.parts.alive() || this.running) return null;
    this.running = true;
    if (attempt === 0) {
      this.nextResume?.cancel();
      this.nextResume = null;
      this.stopNoticed = false;
    }
    try {
      const now = this.parts.clock.now();
      const at = scheduledFor && scheduledFor > now ? scheduledFor : now;
      const messagePrefix = attempt > 0 ? `Resumed (try ${attempt}): ` : latePrefix;
      const { report } = await runDigestJob(this.setup, { mode: 'scheduled', now: at, signal: this.stopping.signal, messagePrefix });
      this.setup.log.info(`Weekly digest: ${report.outcome}: ${report.message}`);
      await this.afterRun(report, attempt, latePrefix !== undefined);
      return report;
    } catch (error) {
      this.setup.log.warn(`Weekly digest run failed: ${String(error)}`);
      return null;
    } finally {
      this.running = false;
    }
  }

  private async afterRun(report: DigestReport, attempt: number, late: boolean): Promise<void> {
    const { config, store, clock } = this.parts;
    let nextTry: Date | null = null;
    if (!this.stopping.signal.aborted && this.parts.alive() && shouldResume(report)) {
      const delay = resumeDelayMs(attempt + 1, config.resume);
      this.scheduleTry(attempt + 1, delay);
      nextTry = new Date(clock.now().getTime() + delay);
    }
    const nextRun = nextTickAfter(config.cron, config.timezone, clock.now());
    const notice = await noticeFor(store, report, { attempt, nextTry, nextRun, stopNoticed: this.stopNoticed, late });
    if (notice) await sendNotice(store, config.operatorEmail, notice, this.setup.log);
    if (notice && nextTry) this.stopNoticed = true;
    if (!nextTry) this.stopNoticed = false;
  }
}
