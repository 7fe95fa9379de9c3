// `npm run digest -- --settle BATCH send|skip`: a person decides what became of a batch reported
// unknown. `skip`: it went out (the provider's log shows it); its recipients are recorded as served.
// `send`: it did not; it goes out now, with its stored content, to those of its recipients who are
// still active, under a new idempotency key (the old one is expired or bound to another body).
import { plural } from '../../../content/text.ts';
import type { Mailer } from '../types.ts';
import type { DigestStore } from '../../store/types.ts';
import { rebuildMessages, stillOnTheList } from './content.ts';
import { DEFAULT_LEASE_MS, SendingLease } from './lease.ts';
import { recordRun, RunTally, startRun, type DigestReport } from './run-report.ts';
import { sendAndRecord } from './send-batch.ts';

export interface SettleOptions {
  store: DigestStore;
  mailer: Mailer;
  unsubscribeSecret: string;
  batchId: string;
  action: 'send' | 'skip';
  now: Date;
  signal?: AbortSignal;
  leaseMs?: number;
}

export interface SettleResult {
  ok: boolean;
  message: string;
  sent: number;
}

export async function settleBatch(options: SettleOptions): Promise<SettleResult> {
  const { store, batchId, action } = options;
  const started = Date.now();
  const clock = () => new Date(options.now.getTime() + (Date.now() - started));
  const batch = await store.findDigestBatch(batchId);
  if (!batch) return { ok: false, message: `There is no batch ${batchId}. Batches reported unknown are listed by the run that found them and in --history.`, sent: 0 };
  if (batch.state !== 'unknown') {
    const why = batch.state === 'pending' ? 'it is pending: run the digest, which repeats or reports it' : `it is already ${batch.state}`;
    return { ok: false, message: `Batch ${batchId} needs no settling: ${why}.`, sent: 0 };
  }

  const runId = await startRun(store, 'settle', options.now);
  const tally = new RunTally();
  const result = action === 'skip' ? await skip() : await send();
  const report: DigestReport = {
    outcome: result.ok ? 'sent' : 'stopped',
    message: result.message,
    recap: { date: batch.recapDate, path: '', headline: '', ageDays: 0 },
    sent: result.sent,
    skippedAlreadySent: 0,
    skippedUnsubscribed: 0,
    failed: tally.failedList(),
    unknown: [],
    durationMs: Date.now() - started,
  };
  await recordRun(store, runId, report, clock());
  return result;

  async function skip(): Promise<SettleResult> {
    await store.settleDigestBatch(batchId, { state: 'skipped', at: clock() });
    return { ok: true, message: `Batch ${batchId} settled as sent: its ${plural(batch!.subscriberIds.length, 'recipient')} are recorded as having the ${batch!.recapDate} recap and will not get it again.`, sent: 0 };
  }

  async function send(): Promise<SettleResult> {
    const lease = new SendingLease(store, batch!.recapDate, options.leaseMs ?? DEFAULT_LEASE_MS);
    if (!(await lease.acquire())) return { ok: false, message: `Another run is sending the ${batch!.recapDate} recap right now; settle batch ${batchId} when it is done.`, sent: 0 };
    try {
      const [content, recipients] = await Promise.all([store.findDigestContent(batch!.contentHash), store.digestRecipients(batch!.subscriberIds)]);
      const rebuilt = rebuildMessages(content, batch!.subscriberIds, recipients, options.unsubscribeSecret);
      if ('problem' in rebuilt) return { ok: false, message: `Batch ${batchId} cannot be sent as it was written: ${rebuilt.problem}. Settle it with skip, or leave it.`, sent: 0 };
      // Those who left since are kept in the batch (it is the record) but not written to.
      const { ids, keep } = stillOnTheList(batch!.subscriberIds, recipients);
      if (ids.length === 0) {
        await store.settleDigestBatch(batchId, { state: 'sent', accepted: [], failure: { reason: 'every recipient left before it was settled' }, at: clock() });
        return { ok: true, message: `Batch ${batchId} settled: every one of its recipients has left since, so nothing was sent.`, sent: 0 };
      }
      const sending = { ...batch!, subscriberIds: ids };
      const stop = await sendAndRecord(
        { store, mailer: options.mailer, unsubscribeSecret: options.unsubscribeSecret, now: clock, tally, signal: options.signal },
        sending,
        keep(rebuilt.messages),
        `${batch!.idempotencyKey}/settled`,
        { since: clock(), state: 'unknown' },
      );
      if (stop) return { ok: false, message: `Batch ${batchId} was not settled: ${stop}.`, sent: tally.sent };
      const failed = tally.failedTotal();
      return { ok: failed === 0, message: `Batch ${batchId} sent to ${plural(tally.sent, 'recipient')}${failed > 0 ? `; ${plural(failed, 'message')} failed` : ''}${ids.length < batch!.subscriberIds.length ? `; ${plural(batch!.subscriberIds.length - ids.length, 'recipient')} had left and got nothing` : ''}.`, sent: tally.sent };
    } finally {
      await lease.release();
    }
  }
}
