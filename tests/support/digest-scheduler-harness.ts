// The scheduler in-process on a manual clock, for the Monday tests: one store, readers on the
// list, the fake Resend behind the real SDK, and each replica's log lines (the operator's notices
// among them) kept for the assertions. Replicas share the store and each has its own clock.
import { recaps } from '../../content/index.ts';
import { startDigestScheduler, type DigestScheduler, type SchedulerOptions } from '../../jobs/digest/scheduler.ts';
import { createManualClock, type ManualClock } from '../../server/clock.ts';
import { createLogger, type Logger } from '../../server/http/logger.ts';
import { ResendMailer } from '../../server/mail/resend.ts';
import type { Store } from '../../server/store/types.ts';
import type { FakeResend } from './fake-resend.ts';

export interface Replica {
  scheduler: DigestScheduler;
  clock: ManualClock;
  lines: string[];
}

/** A logger whose lines are kept (message text only). */
export function capturingLogger(lines: string[]): Logger {
  const logger = createLogger({ level: 'silent', pretty: false });
  const capture = (fields: unknown, msg?: string) => void lines.push(typeof fields === 'string' ? fields : (msg ?? ''));
  logger.info = capture as typeof logger.info;
  logger.warn = capture as typeof logger.warn;
  logger.error = capture as typeof logger.error;
  return logger;
}

/** Starts a replica at `at` on the store; `overrides` set the schedule and its timings. */
export function startReplica(store: Store, fake: FakeResend, at: Date, overrides: Partial<SchedulerOptions> = {}): Replica {
  const clock = createManualClock(at);
  const lines: string[] = [];
  const scheduler = startDigestScheduler({
    cron: '0 9 * * 1',
    timezone: 'UTC',
    freshnessDays: 30,
    store,
    mailer: new ResendMailer({ apiKey: 're_test_monday', baseUrl: fake.url, from: 'Launched Weekly <digest@launchedweekly.test>', policy: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 2 } }),
    recaps,
    siteUrl: 'https://lw.test',
    unsubscribeSecret: 'monday-harness-secret-0123456789abcdef0123456789',
    logger: capturingLogger(lines),
    clock,
    catchUpHours: 6,
    resume: { firstMs: 60_000, maxMs: 30 * 60_000 },
    operatorEmail: 'operator@launchedweekly.test',
    ...overrides,
  });
  return { scheduler, clock, lines };
}

/** The operator's notices a replica gave (each is logged with its subject first). */
export const noticesIn = (lines: readonly string[]) => lines.filter((line) => line.startsWith('[Launched Weekly]')).map((line) => line.split('\n')[0]!);
