// One server process of the simulation: the real digest scheduler (start-up check, DIGEST_CRON's
// ticks, resume tries, notices, housekeeping) and the real outbox worker, both on the simulation's
// clock, so every wait is a timer the scenario moves; its log lines go to the trace.
import type { Clock, TimerHandle } from '../../server/clock.ts';
import { createLogger, type Logger } from '../../server/http/logger.ts';
import { createOutboxWorker, type OutboxWorker } from '../../server/mail/outbox-worker.ts';
import type { ComposeMail } from '../../server/mail/subscriber-mail.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { Store } from '../../server/store/types.ts';
import type { Recap } from '../../content/schema.ts';
import { nextTickAfter } from '../../jobs/digest/cron-time.ts';
import { NOTICE_SUBJECT_PREFIX } from '../../jobs/digest/notices.ts';
import type { ResumePolicy } from '../../jobs/digest/resume.ts';
import { startDigestScheduler, type DigestScheduler } from '../../jobs/digest/scheduler.ts';
import type { Trace } from './trace.ts';

export { nextTickAfter };

export interface ReplicaConfig {
  cron: string;
  timezone: string;
  freshnessDays: number;
  catchUpHours: number;
  resume: ResumePolicy;
  operatorEmail: string;
  /** How long a dead holder keeps a tick and the sending lease, in simulated time. */
  leaseMs: number;
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

/** A logger whose lines go to the trace, the operator's notices and holds as notices; a killed process writes nothing. */
function traceLogger(name: string, trace: Trace, alive: () => boolean): Logger {
  const line = (level: string) => (first: unknown, second?: unknown) => {
    if (!alive()) return;
    const text = typeof first === 'string' ? first : typeof second === 'string' ? second : JSON.stringify(first);
    if (text.startsWith(NOTICE_SUBJECT_PREFIX)) {
      const [subject = '', ...rest] = text.split('\n');
      trace.notice(name, subject, rest.join('\n'));
    } else if (text.startsWith('outbox: The mail provider refused the sender')) {
      trace.notice(name, 'HELD', text);
    } else trace.add(name, `${level} ${text.split('\n')[0]!.slice(0, 220)}`);
  };
  const logger = createLogger({ level: 'silent', pretty: false });
  logger.info = line('info') as Logger['info'];
  logger.warn = line('warn') as Logger['warn'];
  logger.error = line('error') as Logger['error'];
  return logger;
}

export class SimReplica {
  private readonly stopping = new AbortController();
  private readonly worker: OutboxWorker;
  private readonly logger: Logger;
  private scheduler: DigestScheduler | null = null;
  private poll: TimerHandle | null = null;

  constructor(private readonly parts: ReplicaParts) {
    const { name, store, mailer, trace, config, clock, alive } = parts;
    this.logger = traceLogger(name, trace, alive);
    const log = { info: (text: string) => this.logger.info(text), warn: (text: string) => this.logger.warn(text) };
    this.worker = createOutboxWorker({
      store,
      mailer: async () => mailer,
      compose: simulatedCompose,
      log,
      operatorEmail: config.operatorEmail,
      retryMaxSeconds: config.outboxRetryMaxSeconds,
      clock,
    });
  }

  get name(): string {
    return this.parts.name;
  }

  private get running(): boolean {
    return this.parts.alive() && !this.stopping.signal.aborted;
  }

  /** What a process does when it starts: the scheduler (its start-up check done), then the outbox. */
  async start(): Promise<void> {
    const { store, mailer, recaps, config, clock, name } = this.parts;
    this.scheduler = startDigestScheduler({
      cron: config.cron,
      timezone: config.timezone,
      freshnessDays: config.freshnessDays,
      store,
      mailer,
      recaps,
      siteUrl: 'https://launched.test',
      unsubscribeSecret: 'simulation-secret',
      logger: this.logger,
      clock,
      resume: config.resume,
      operatorEmail: config.operatorEmail,
      catchUpHours: config.catchUpHours,
      leaseMs: config.leaseMs,
      holder: `sim/${name}`,
      // A store call fails here only in a killed process, which would never have waited: the
      // pause between its tries to record an answer would be real time the scenario stands still.
      pause: () => Promise.resolve(),
    });
    await this.scheduler.idle();
    this.armOutbox();
    await this.deliverOutbox();
  }

  /** A deploy's SIGTERM between two steps (or the end of a killed process): it stops waiting. */
  stop(): void {
    this.stopping.abort();
    this.poll?.cancel();
    this.poll = null;
    void this.scheduler?.stop();
  }

  async deliverOutbox(): Promise<void> {
    if (this.running) await this.worker.deliverDue();
  }

  private armOutbox(): void {
    this.poll = this.parts.clock.setTimer(async () => {
      if (!this.running) return;
      await this.deliverOutbox();
      this.armOutbox();
    }, this.parts.config.outboxPollMs);
  }
}
