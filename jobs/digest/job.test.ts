import { describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { OutboxMailer } from '../../server/mail/outbox.ts';
import { openPGliteStore } from '../../server/store/pglite.ts';
import { digestJobOptions, isRealRun, runDigestJob, type DigestSetup } from './job.ts';
import { runFailed, type DigestReport } from '../../server/mail/digest/run-report.ts';

const report = (outcome: DigestReport['outcome'], failed: DigestReport['failed'] = []): DigestReport => ({
  outcome,
  message: '',
  recap: null,
  sent: 0,
  skippedAlreadySent: 0,
  skippedUnsubscribed: 0,
  failed,
  unknown: [],
  durationMs: 0,
});

describe('runFailed: what the CLI exits 1 on and the scheduler logs as an error', () => {
  it('fails a run that lost messages or needs a person, and nothing else', () => {
    for (const outcome of ['stopped', 'test-failed', 'unknown-recap', 'not-yet', 'unknown'] as const) expect(runFailed(report(outcome)), outcome).toBe(true);
    for (const outcome of ['sent', 'already-sent', 'no-subscribers', 'dry-run', 'test-sent', 'stale', 'locked', 'no-recap'] as const) {
      expect(runFailed(report(outcome)), outcome).toBe(false);
    }
    expect(runFailed(report('sent', [{ reason: 'mailbox full', count: 1 }]))).toBe(true);
  });
});

describe('the job as the CLI and the scheduler run it', () => {
  const lines: string[] = [];
  const setup = (store: DigestSetup['store'], dir: string): DigestSetup => ({
    store,
    mailer: new OutboxMailer({ dir, from: 'Launched Weekly <digest@launchedweekly.test>' }),
    recaps,
    siteUrl: 'http://localhost:3000',
    unsubscribeSecret: 'job-test-secret-0123456789abcdef0123456789ab',
    freshnessDays: 7,
    timezone: 'UTC',
    production: false,
    log: { info: (line) => lines.push(line), warn: (line) => lines.push(`warning: ${line}`) },
  });

  it('gives every run the pre-send checks, the calendar and the request', async () => {
    const store = await openPGliteStore(null);
    try {
      const options = digestJobOptions(setup(store, '/nonexistent'), { mode: 'manual', now: new Date('2025-07-15T09:00:00Z'), recapWeek: '2025-07-06', dryRun: true });
      expect(options).toMatchObject({ mode: 'manual', recapWeek: '2025-07-06', dryRun: true, timezone: 'UTC', freshnessDays: 7, siteUrl: 'http://localhost:3000' });
      expect(options.preSend).toBeTypeOf('function');
    } finally {
      await store.close();
    }
  });

  it('prunes after a real run from the CLI only: never on a dry run, a test copy, or a scheduled run', async () => {
    expect([isRealRun({}), isRealRun({ dryRun: true }), isRealRun({ testRecipient: 'me@example.com' })]).toEqual([true, false, false]);
    const store = await openPGliteStore(null);
    try {
      const at = { mode: 'manual', now: new Date('2025-07-15T09:00:00Z') } as const;
      const dry = await runDigestJob(setup(store, '/nonexistent'), { ...at, dryRun: true });
      expect(dry).toMatchObject({ report: { outcome: 'dry-run' } });
      const scheduled = await runDigestJob(setup(store, '/nonexistent'), { ...at, mode: 'scheduled', recapWeek: '2020-01-01' });
      expect(scheduled).toMatchObject({ report: { outcome: 'unknown-recap' } });
      expect(lines.filter((line) => line.startsWith('Removed'))).toEqual([]);
      const real = await runDigestJob(setup(store, '/nonexistent'), { ...at, recapWeek: '2020-01-01' });
      expect(real).toMatchObject({ report: { outcome: 'unknown-recap' } });
      expect(lines).toContain('Removed 0 unconfirmed signups older than 30 days');
    } finally {
      await store.close();
    }
  });
});
