// The Monday job: choose the recap, take the sending lease, settle what an earlier run left
// pending, then plan, write, send and record one batch at a time, and report. The CLI and the
// scheduler are thin shells around it; everything it touches is passed in. Its parts live in
// jobs/digest/ and each can be run alone against a real store.
//
// Exactly once, across crashes and replicas (docs/operating.md, "How exactly once holds"):
// - A batch is committed (recipients, idempotency key, content) before its request leaves, and
//   closed with its ledger rows in one transaction after the provider answered.
// - A rerun first repeats every pending batch exactly, with its stored key, while the provider
//   still remembers that key (24 h); later it marks it unknown and says how to settle it.
// - The ledger and open batches keep everyone already served or in flight out of new batches.
// - The lease keeps a second process from sending the same recap at the same time.
import { prepareDigest } from '../templates/render-digest.ts';
import type { Recap } from '../../../content/schema.ts';
import { plural } from '../../../content/text.ts';
import type { Mailer } from '../types.ts';
import type { DigestBatch, DigestContent, DigestRunKind, DigestStore, Subscriber } from '../../store/types.ts';
import { digestContentOf, messageFrom, messageMaker } from './content.ts';
import { candidateGroups, DEFAULT_PAGE_SIZE } from './plan.ts';
import { chooseRecap, isoDateIn, type RecapRef } from './recap.ts';
import { DEFAULT_LEASE_MS, SendingLease } from './lease.ts';
import { closingReport, recordRun, RunTally, startRun, type DigestOutcome, type DigestReport } from './run-report.ts';
import { sendAndRecord, settleOpenBatches, templateFor, type BatchContext } from './send-batch.ts';
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock.ts';

export { DEFAULT_PAGE_SIZE, DEFAULT_LEASE_MS, isoDateIn };
export { findRecapIn } from './recap.ts';
export type { DigestOutcome, DigestReport, RecapRef };

export interface DigestLog {
  info(message: string): void;
  warn(message: string): void;
}

export interface DigestProgress {
  recap: RecapRef;
  /** Active subscribers when the run started. */
  total: number;
  sent: number;
  failed: number;
  skippedAlreadySent: number;
  skippedUnsubscribed: number;
  elapsedMs: number;
  dryRun: boolean;
}

export interface DigestOptions {
  store: DigestStore;
  mailer: Mailer;
  /** Newest first or in any order; the job sorts. */
  recaps: readonly Recap[];
  /** When the run starts; the run's clock goes on from here. */
  now: Date;
  siteUrl: string;
  unsubscribeSecret: string;
  mode: 'scheduled' | 'manual';
  /** `2025-07-14` or its path; the newest public recap when absent. */
  recapWeek?: string;
  /** Render and count, send nothing, touch no ledger and take no lease. */
  dryRun?: boolean;
  /** Send one test copy to this address; the ledger is not touched. */
  testRecipient?: string;
  /** A scheduled run sends a recap only while it is younger than this many days. */
  freshnessDays: number;
  /** Whose calendar decides which day "today" is (DIGEST_TZ). */
  timezone?: string;
  log?: DigestLog;
  onProgress?: (progress: DigestProgress) => void;
  /** Stops the run before its next batch; the batch in flight finishes and is recorded. */
  signal?: AbortSignal;
  pageSize?: number;
  leaseMs?: number;
  /**
   * Where "pre-send checks" run: after the recap is chosen and rendered, before anything is sent
   * (a test copy included). A string stops the run with that reason; null lets it go on.
   */
  preSend?: (context: { recap: Recap; content: DigestContent; store: DigestStore }) => Promise<string | null>;
  /** Put before the run's message in its report and history (the scheduler's "Resumed (try N): "). */
  messagePrefix?: string;
  /** The run's history row when it exists already (a scheduled run's row is made with its tick's claim). */
  runId?: string;
  /** The sending lease's clock (its renewals and its expiry); the system clock by default. */
  clock?: Clock;
  /** Waits between tries to record a batch's answer; a real wait by default. */
  pause?: (ms: number) => Promise<void>;
}

interface Run {
  options: DigestOptions;
  tally: RunTally;
  started: number;
  clock: () => Date;
  recap: RecapRef | null;
  /** This run's row in the history (null when the history could not be written). */
  runId: string | null;
}

const kindOf = (options: DigestOptions): DigestRunKind => (options.testRecipient ? 'test' : options.dryRun ? 'dry-run' : options.mode);

function finish(run: Run, outcome: DigestOutcome, message: string): DigestReport {
  const { tally } = run;
  return {
    outcome,
    message,
    recap: run.recap,
    sent: tally.sent,
    skippedAlreadySent: tally.skippedAlreadySent,
    skippedUnsubscribed: tally.skippedUnsubscribed,
    failed: tally.failedList(),
    unknown: tally.unknown,
    durationMs: Date.now() - run.started,
  };
}

export async function runWeeklyDigest(options: DigestOptions): Promise<DigestReport> {
  const started = Date.now();
  const run: Run = { options, tally: new RunTally(), started, clock: () => new Date(options.now.getTime() + (Date.now() - started)), recap: null, runId: null };
  const warn = (line: string) => options.log?.warn(line);
  const runId = options.runId ?? (await startRun(options.store, kindOf(options), options.now, warn));
  run.runId = runId;
  let report: DigestReport;
  try {
    report = await runChosen(run);
  } catch (error) {
    report = finish(run, 'stopped', `Stopped: unexpected error: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (options.messagePrefix) report = { ...report, message: `${options.messagePrefix}${report.message}` };
  await recordRun(options.store, runId, report, run.clock(), warn);
  return report;
}

async function runChosen(run: Run): Promise<DigestReport> {
  const { options } = run;
  const chosen = chooseRecap({
    recaps: options.recaps,
    publication: { now: options.now, timeZone: options.timezone ?? 'UTC' },
    recapWeek: options.recapWeek,
    scheduled: options.mode === 'scheduled',
    preview: options.dryRun ?? false,
    testRecipient: options.testRecipient,
    freshnessDays: options.freshnessDays,
  });
  run.recap = chosen.ref;
  if ('refused' in chosen) return finish(run, chosen.refused, chosen.message);
  const { recap, label, ref } = chosen;
  options.log?.info(`Recap: ${label} — ${recap.headline} (${recap.path}, ${ref.ageDays === 0 ? 'dated today' : ref.ageDays > 0 ? `${plural(ref.ageDays, 'day')} old` : `dated ${recap.date}`})`);

  const content = digestContentOf(await prepareDigest(recap, options.siteUrl), options.mailer.from, options.siteUrl, options.unsubscribeSecret);
  // The single place pre-send checks run: nothing has gone out yet, a test copy included.
  const refusal = (await options.preSend?.({ recap, content, store: options.store })) ?? null;
  if (refusal) return finish(run, 'stopped', `Nothing sent: ${refusal}`);

  if (options.testRecipient) return sendTest(run, content, label, options.testRecipient);
  if (options.dryRun) return dryRun(run, content, label);
  return sendAll(run, content, label);
}

async function sendTest(run: Run, content: DigestContent, label: string, address: string): Promise<DigestReport> {
  const { store, mailer, unsubscribeSecret, dryRun, signal } = run.options;
  // The operator's own link when they are on the list; a token that unsubscribes nobody otherwise.
  const known = await store.findSubscriberByEmail(address);
  const message = messageFrom(content, { id: known?.id ?? 'test-message', email: address }, unsubscribeSecret, '[Test] ');
  if (dryRun) {
    run.tally.sent = 1;
    return finish(run, 'dry-run', `Dry run: a test of ${label} would go to ${address}. Nothing was sent.`);
  }
  const result = await mailer.send(message, { signal });
  if (result.status === 'accepted') {
    run.tally.sent = 1;
    return finish(run, 'test-sent', `Sent a test of ${label} to ${address}${result.providerId ? ` (${mailer.kind === 'outbox' ? 'file' : 'id'} ${result.providerId})` : ''}. The ledger is unchanged.`);
  }
  run.tally.fail(result.reason);
  return finish(run, 'test-failed', `The test of ${label} to ${address} failed: ${result.reason}.`);
}

async function dryRun(run: Run, content: DigestContent, label: string): Promise<DigestReport> {
  const { store, mailer } = run.options;
  run.tally.skippedAlreadySent = await store.countDeliveries(content.recapDate);
  const total = (await store.countSubscribers()).active;
  for await (const group of candidateGroups(store, content.recapDate, mailer.maxBatchSize, run.options.pageSize)) {
    run.tally.sent += group.length;
    progress(run, total, true);
  }
  return finish(run, 'dry-run', `Dry run: ${label} would go to ${plural(run.tally.sent, 'subscriber')}; ${run.tally.skippedAlreadySent.toLocaleString('en-US')} already have it. Nothing was sent.`);
}

function progress(run: Run, total: number, dryRun: boolean) {
  const { tally } = run;
  run.options.onProgress?.({
    recap: run.recap!,
    total,
    sent: tally.sent,
    failed: tally.failedTotal(),
    skippedAlreadySent: tally.skippedAlreadySent,
    skippedUnsubscribed: tally.skippedUnsubscribed,
    elapsedMs: Date.now() - run.started,
    dryRun,
  });
}

async function sendAll(run: Run, content: DigestContent, label: string): Promise<DigestReport> {
  const { store, leaseMs = DEFAULT_LEASE_MS } = run.options;
  const lease = new SendingLease(store, content.recapDate, leaseMs, run.options.clock);
  if (!(await lease.acquire())) {
    return finish(
      run,
      'locked',
      `Nothing sent: another run is sending ${label} right now (it holds the sending lease). If that run was killed, its lease runs out within ${Math.round(leaseMs / 1000)} s; run again after that.`,
    );
  }
  let stopped: string | null;
  try {
    stopped = await sendUnderLease(run, content, lease);
  } catch (error) {
    stopped = `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    await lease.release();
  }
  const closing = closingReport(run.tally, label, stopped);
  return finish(run, closing.outcome, closing.message);
}

async function sendUnderLease(run: Run, content: DigestContent, lease: SendingLease): Promise<string | null> {
  const { store, mailer, unsubscribeSecret, signal, log } = run.options;
  const ctx: BatchContext = { store, mailer, unsubscribeSecret, now: run.clock, tally: run.tally, signal, warn: (line) => log?.warn(line), pause: run.options.pause };
  run.tally.skippedAlreadySent = await store.countDeliveries(content.recapDate);
  const total = (await store.countSubscribers()).active;

  const settled = await settleOpenBatches(ctx, content.recapDate);
  progress(run, total, false);
  if (settled) return settled;
  await store.saveDigestContent(content);
  const prepared = await templateFor(ctx, content);
  if ('stop' in prepared) return prepared.stop;
  const messageFor = messageMaker(content, prepared.template, unsubscribeSecret);

  // The next group is read and its messages made while this batch is with the provider.
  const groups = candidateGroups(store, content.recapDate, mailer.maxBatchSize, run.options.pageSize);
  const readNext = async () => {
    const next = await groups.next();
    if (next.done) return null;
    return { group: next.value, messages: new Map(next.value.map((s) => [s.id, messageFor(s)])) };
  };
  let upcoming = readNext();
  try {
    for (;;) {
      const current = await upcoming;
      if (!current) return null;
      upcoming = readNext();
      upcoming.catch(() => {});
      if (signal?.aborted) return 'stopped on request';
      const leaseProblem = await lease.check();
      if (leaseProblem) return leaseProblem;

      const batch = await writeBatch(run, content, current.group);
      if (!batch) continue;
      const stop = await sendAndRecord(
        ctx,
        batch,
        batch.subscriberIds.map((id) => current.messages.get(id)!),
        batch.idempotencyKey,
        { since: batch.createdAt, state: 'pending', justWritten: true },
      );
      progress(run, total, false);
      if (stop) return stop;
    }
  } finally {
    await upcoming.catch(() => {});
  }
}

/** Commits the group as a pending batch; whoever left since it was read is not in it. */
async function writeBatch(run: Run, content: DigestContent, group: Subscriber[]): Promise<DigestBatch | null> {
  const batch = await run.options.store.writeDigestBatch({
    recapDate: content.recapDate,
    runId: run.runId,
    idempotencyKey: `digest-${content.recapDate}-${randomUUID()}`,
    contentHash: content.contentHash,
    subscriberIds: group.map((s) => s.id),
    createdAt: run.clock(),
  });
  run.tally.skippedUnsubscribed += group.length - (batch?.subscriberIds.length ?? 0);
  return batch;
}
