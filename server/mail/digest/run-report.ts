// What a run tells people: the counts it keeps while it goes, the one-sentence message at the end,
// the row it leaves in the run history, and the history as a table (`npm run digest -- --history`).
import type { OutboxSummary } from '../../store/mail-outbox.ts';
import { plural, pluralWord } from '../../../content/text.ts';
import type { DigestRun, DigestRunKind, DigestStore } from '../../store/types.ts';
import type { RecapRef } from './recap.ts';

export type DigestOutcome =
  | 'sent'
  | 'already-sent'
  | 'no-subscribers'
  | 'dry-run'
  | 'test-sent'
  | 'test-failed'
  | 'stale'
  | 'locked'
  | 'no-recap'
  | 'unknown-recap'
  | 'not-yet'
  | 'stopped'
  | 'unknown';

const FAILING_OUTCOMES = new Set<DigestReport['outcome']>(['stopped', 'test-failed', 'unknown-recap', 'not-yet', 'unknown']);

/**
 * A run failed when a message failed, or when it ended in a way someone has to act on (stopped,
 * unknown batches, a failed test, a week that does not exist or is not public). Nothing to send
 * (no recap, a stale one, all served) and another run holding the lease are not failures. The
 * CLI exits 1 on it; the scheduler logs the run as an error.
 */
export function runFailed(report: DigestReport): boolean {
  return report.failed.some((failure) => failure.count > 0) || FAILING_OUTCOMES.has(report.outcome);
}

/** A batch the run could not settle safely; the operator decides with `--settle`. */
export interface UnknownBatch {
  id: string;
  recapDate: string;
  sequence: number;
  recipients: number;
  reason: string;
  /** The commands that settle it. */
  settle: { send: string; skip: string };
  /** This run made it unknown (rather than finding it so). */
  madeThisRun?: boolean;
}

export interface DigestReport {
  outcome: DigestOutcome;
  /** One sentence for a person: what happened and, when nothing was sent, why. */
  message: string;
  recap: RecapRef | null;
  /** Messages the provider accepted in this run (in a dry run: messages that would go out). */
  sent: number;
  skippedAlreadySent: number;
  /** Left (unsubscribed, bounced, complained) after the run read them, before their batch was written. */
  skippedUnsubscribed: number;
  failed: { reason: string; count: number }[];
  /** Batches left `unknown`: sent or not, nobody can tell any more. */
  unknown: UnknownBatch[];
  durationMs: number;
}

export const settleCommands = (batchId: string) => ({
  send: `npm run digest -- --settle ${batchId} send`,
  skip: `npm run digest -- --settle ${batchId} skip`,
});

/** The counts of one run, kept as it goes. */
export class RunTally {
  sent = 0;
  skippedAlreadySent = 0;
  skippedUnsubscribed = 0;
  readonly unknown: UnknownBatch[] = [];
  private readonly failures = new Map<string, number>();

  fail(reason: string, count = 1) {
    this.failures.set(reason, (this.failures.get(reason) ?? 0) + count);
  }
  failedTotal() {
    return [...this.failures.values()].reduce((sum, n) => sum + n, 0);
  }
  failedList() {
    return [...this.failures].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count);
  }
}

/** The sentence for an unknown batch, with what to run. */
export function unknownSentence(batches: readonly UnknownBatch[]): string {
  if (batches.length === 0) return '';
  const each = batches.map((b) => `batch ${b.id} (${plural(b.recipients, 'recipient')}: ${b.reason})`).join('; ');
  return ` ${plural(batches.length, 'batch', 'batches')} could not be settled safely and ${pluralWord(batches.length, 'is', 'are')} unknown: ${each}. Its recipients get nothing more until you decide: \`${batches[0]!.settle.send}\` if it did not go out (check the provider's log), \`${batches[0]!.settle.skip}\` if it did.`;
}

/** The outcome and sentence of a run that went through its list (or stopped). */
export function closingReport(tally: RunTally, label: string, stopped: string | null): { outcome: DigestOutcome; message: string } {
  const unknown = unknownSentence(tally.unknown);
  if (stopped) {
    return {
      outcome: 'stopped',
      message: `Stopped after sending ${label} to ${plural(tally.sent, 'subscriber')}: ${stopped}. Run again to continue; subscribers who have it are skipped.${unknown}`,
    };
  }
  const failed = tally.failedTotal();
  if (tally.sent === 0 && failed === 0 && tally.unknown.length === 0) {
    if (tally.skippedAlreadySent === 0) return { outcome: 'no-subscribers', message: `Nothing to send: there are no active subscribers for ${label}.` };
    return {
      outcome: 'already-sent',
      message: `Nothing to send: ${label} already went to every active subscriber (${tally.skippedAlreadySent.toLocaleString('en-US')}). A recap is sent once; the next one goes out when its file is in content/recaps.`,
    };
  }
  return {
    outcome: tally.unknown.length > 0 ? 'unknown' : 'sent',
    message: `Sent ${label} to ${plural(tally.sent, 'subscriber')}${failed > 0 ? `; ${plural(failed, 'message')} failed` : ''}.${unknown}`,
  };
}

/**
 * Leaves the report in the run history. Best effort: the history must not stop a run whose
 * sending went through (the batches and the ledger are the record that matters).
 */
export async function recordRun(store: DigestStore, runId: string | null, report: DigestReport, finishedAt: Date, warn?: (line: string) => void) {
  if (runId === null) return;
  try {
    await store.finishDigestRun(runId, {
      recapDate: report.recap?.date ?? null,
      outcome: report.outcome,
      sent: report.sent,
      failed: report.failed.reduce((sum, f) => sum + f.count, 0),
      skippedAlreadySent: report.skippedAlreadySent,
      skippedLeft: report.skippedUnsubscribed,
      unknownBatches: report.unknown.length,
      message: report.message,
      finishedAt,
    });
  } catch (error) {
    warn?.(`The run history could not be written: ${error instanceof Error ? error.message : String(error)}`);
  }
}

export async function startRun(store: DigestStore, kind: DigestRunKind, at: Date, warn?: (line: string) => void): Promise<string | null> {
  try {
    return await store.startDigestRun(kind, at);
  } catch (error) {
    warn?.(`The run history could not be written: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}

/** The structured fields of a report, as the scheduled run logs them and the history stores them. */
export function reportFields(report: DigestReport) {
  return {
    outcome: report.outcome,
    recap: report.recap?.date,
    sent: report.sent,
    skippedAlreadySent: report.skippedAlreadySent,
    skippedUnsubscribed: report.skippedUnsubscribed,
    failed: report.failed,
    unknownBatches: report.unknown.map((b) => b.id),
    durationMs: report.durationMs,
  };
}

const cell = (value: string, width: number) => (value.length > width ? `${value.slice(0, width - 1)}…` : value.padEnd(width));

/** The history as a plain-text table, newest first. */
export function historyTable(runs: readonly DigestRun[]): string {
  if (runs.length === 0) return 'No digest runs yet.';
  const header = `${cell('run', 6)} ${cell('started (UTC)', 17)} ${cell('kind', 9)} ${cell('recap', 10)} ${cell('outcome', 14)} ${'sent'.padStart(6)} ${'failed'.padStart(6)} ${'had it'.padStart(6)} ${'left'.padStart(5)} ${'unkn.'.padStart(5)}  message`;
  const rows = runs.map((run) => {
    const started = run.startedAt.toISOString().slice(0, 16).replace('T', ' ');
    const outcome = run.outcome ?? (run.finishedAt ? '?' : 'interrupted');
    return `${cell(run.id, 6)} ${cell(started, 17)} ${cell(run.kind, 9)} ${cell(run.recapDate ?? '—', 10)} ${cell(outcome, 14)} ${String(run.sent ?? 0).padStart(6)} ${String(run.failed ?? 0).padStart(6)} ${String(run.skippedAlreadySent ?? 0).padStart(6)} ${String(run.skippedLeft ?? 0).padStart(5)} ${String(run.unknownBatches ?? 0).padStart(5)}  ${run.message ?? (run.outcome === null ? 'no outcome recorded: still running, or killed' : '')}`;
  });
  return [header, ...rows].join('\n');
}

/** Shown only when there are some: a 409 under a message's own key, very likely sent, never retried. */
export const unknownPart = (unknown: number) => (unknown > 0 ? ` · ${unknown} unknown (very likely sent, not retried)` : '');

/** The mail outbox's last days, for --history and the scheduler's log: what is waiting or failed. */
export function outboxLines(summary: OutboxSummary): string[] {
  const lines = [
    `Mail outbox (confirmations, welcomes, notices), last ${summary.days} days: ${summary.queued} queued · ${summary.retrying} retrying · ${summary.failed} failed · ${summary.sent} sent${unknownPart(summary.unknown)}${summary.oldestOpenAt ? ` · oldest waiting since ${summary.oldestOpenAt.toISOString().slice(0, 16).replace('T', ' ')} UTC` : ''}`,
  ];
  for (const f of summary.failures) {
    lines.push(`  #${f.id} ${f.kind} ${f.state}, queued ${f.createdAt.toISOString().slice(0, 16).replace('T', ' ')}, ${plural(f.attempts, 'try', 'tries')}: ${f.lastError ?? 'no reason recorded'}`);
  }
  return lines;
}

