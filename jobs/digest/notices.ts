// The operator's notices about scheduled runs (OPERATOR_EMAIL): after a run, what it did (sent,
// failed, unknown, skipped, bounce and complaint rates, the next run); when a run stops, what,
// why and when it is tried again (once per stop, not for every failed try); when a resumed run
// completes. They go through the durable mail outbox, so an outage of the very provider that
// stopped the run delays them, never loses them. Without OPERATOR_EMAIL the log says the same.
import { plural } from '../../content/text.ts';
import { queueOperatorNotice, type NoticeRecipients } from '../../server/mail/operator-notice.ts';
import type { DigestStore } from '../../server/store/types.ts';
import type { DigestReport } from '../../server/mail/digest/run-report.ts';

export const NOTICE_SUBJECT_PREFIX = '[Launched Weekly]';

export interface NoticeContext {
  /** 0 for the run the schedule fired, N for resume try N. */
  attempt: number;
  /** When the scheduler tries again; null when the run was conclusive. */
  nextTry: Date | null;
  /** When the schedule fires next. */
  nextRun: Date | null;
  /** Whether this run's stop was already told (a notice per stop, not per failed try). */
  stopNoticed: boolean;
  /** A missed tick run late (catch-up.ts): its message says when and why. */
  late?: boolean;
}

export interface Notice {
  subject: string;
  text: string;
}

export interface NoticeLog {
  info(line: string): void;
  warn(line: string): void;
}

const when = (date: Date | null) => (date ? `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'not scheduled');
const percent = (part: number, whole: number) => (whole > 0 ? `${((part / whole) * 100).toFixed(2)} %` : '0.00 %');

/** The recap's figures over every run so far (the report's own snapshot), as lines of the notice. */
async function figures(store: DigestStore, report: DigestReport): Promise<string[]> {
  const lines = [
    `This run: ${report.sent} sent · ${report.failed.reduce((sum, f) => sum + f.count, 0)} failed · ${report.unknown.length} unknown batches · ${report.skippedAlreadySent} already had it · ${report.skippedUnsubscribed} left before their batch`,
  ];
  if (!report.recap) return lines;
  try {
    const send = (await store.reportSnapshot(1)).sends.find((s) => s.recapDate === report.recap!.date);
    if (send) {
      lines.push(
        `The ${report.recap.date} recap so far: ${send.sent} sent · ${send.failed} failed · ${send.unknown} unknown · ${send.skipped} skipped · bounces ${send.bounced} (${percent(send.bounced, send.sent)}) · complaints ${send.complained} (${percent(send.complained, send.sent)})`,
      );
    }
  } catch (error) {
    lines.push(`(The recap's totals could not be read: ${error instanceof Error ? error.message : String(error)})`);
  }
  return lines;
}

/**
 * Which notice a run deserves, if any. Not one for another replica's lease in the way (that
 * replica tells its own run), nor for a try that stopped again after the stop was told (unless it
 * left a batch unknown), nor for
 * a resumed try that only found the recap sent by someone else. A late tick's end is always told:
 * a server that died after its late run sent the week, before settling the tick, told nothing.
 */
export async function noticeFor(store: DigestStore, report: DigestReport, context: NoticeContext): Promise<Notice | null> {
  const recap = report.recap ? `the ${report.recap.date} recap` : 'the weekly digest';
  // A batch this try made unknown needs a person, so its try is told even after the stop was.
  const madeUnknown = report.unknown.filter((batch) => batch.madeThisRun).length;
  if (context.nextTry && (report.outcome === 'locked' || (context.stopNoticed && madeUnknown === 0))) return null;
  if (!context.nextTry && context.attempt > 0 && !context.stopNoticed && !context.late && report.outcome === 'already-sent') return null;
  const body = await figures(store, report);
  const next = `Next scheduled run: ${when(context.nextRun)}.`;
  if (context.nextTry) {
    return {
      subject: `${NOTICE_SUBJECT_PREFIX} Stopped: ${recap}${madeUnknown > 0 ? `, ${plural(madeUnknown, 'batch', 'batches')} unknown` : ''}, retrying at ${when(context.nextTry)}`,
      text: [`The scheduled run of ${recap} stopped at ${when(new Date())}.`, `Why: ${report.message}`, `It is tried again at ${when(context.nextTry)} and then with growing pauses (up to 30 minutes) until it is done or the recap is no longer fresh; nothing to do unless this repeats.`, '', ...body, '', next].join('\n'),
    };
  }
  if (context.attempt > 0 || context.stopNoticed) {
    return {
      subject: `${NOTICE_SUBJECT_PREFIX} Resumed and finished${context.late ? ' (late)' : ''}: ${recap}, ${report.outcome}`,
      text: [`The scheduled run of ${recap} was resumed (try ${context.attempt}) and finished: ${report.message}`, '', ...body, '', next].join('\n'),
    };
  }
  return {
    subject: `${NOTICE_SUBJECT_PREFIX} Weekly digest${context.late ? ' (late)' : ''}: ${report.outcome}, ${plural(report.sent, 'message')} sent`,
    text: [`The scheduled run finished: ${report.message}`, '', ...body, '', next].join('\n'),
  };
}

/** Writes the notice to the log, the channel that every notice reaches. */
export function logNotice(notice: Notice, log: NoticeLog): void {
  log.info(`${notice.subject}\n${notice.text}`);
}

/** Queues the notice for OPERATOR_EMAIL and NOTICE_WEBHOOK_URL, and logs it either way. */
export async function sendNotice(store: DigestStore, to: NoticeRecipients, notice: Notice, log: NoticeLog): Promise<void> {
  logNotice(notice, log);
  try {
    await queueOperatorNotice(store, to, notice);
  } catch (error) {
    log.warn(`The operator's notice could not be queued: ${error instanceof Error ? error.message : String(error)}`);
  }
}
