// Sending one written batch and recording the provider's answer, and settling the batches a
// crashed run left pending. A batch row exists before its request leaves (writeDigestBatch); the
// answer closes it with its ledger rows in one transaction. Whatever may have gone out but cannot
// be confirmed stays pending (to be repeated with the same key) or becomes unknown (for a person to
// decide); it is never counted as a failure and never planned again.
import { plural } from '../../../content/text.ts';
import { longestRetryBudgetMs } from '../delivery-policy.ts';
import type { BatchMessage, Mailer, PreparedTemplate } from '../types.ts';
import type { BatchFailure, BatchState, DigestBatch, DigestContent, DigestStore } from '../../store/types.ts';
import { digestTemplateOf, rebuildMessages, stillOnTheList } from './content.ts';
import { settleCommands, type RunTally, type UnknownBatch } from './run-report.ts';

/** How long the provider honours an idempotency key (Resend: 24 hours). */
export const PROVIDER_IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Our clock against the provider's. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;
/**
 * A batch's every attempt must reach the provider inside its window, measured from when the batch
 * was written (before the first request left). The margin is the delivery policy's longest retry
 * budget with the largest --timeout allowed (about 2.8 h with the defaults), plus clock skew: an
 * attempt that starts before the cutoff ends, with all its retries, inside the window.
 */
export const REPEAT_SAFETY_MARGIN_MS = longestRetryBudgetMs() + CLOCK_SKEW_MS;
/** No attempt at a batch starts when it is this old or older. */
export const LAST_ATTEMPT_AGE_MS = PROVIDER_IDEMPOTENCY_WINDOW_MS - REPEAT_SAFETY_MARGIN_MS;
const RECORD_ATTEMPTS = 4;

export interface BatchContext {
  store: DigestStore;
  mailer: Mailer;
  unsubscribeSecret: string;
  /** The run's clock (injected in tests, so "25 hours later" is a parameter). */
  now: () => Date;
  tally: RunTally;
  signal?: AbortSignal;
  warn?: (line: string) => void;
  /** Waits between attempts to record; tests make it instant. */
  pause?: (ms: number) => Promise<void>;
  /** The run's registered templates by content hash (each rendering's registered once a run). */
  templates?: Map<string, PreparedTemplate | null>;
}

/**
 * The shared template a rendering's batches go out with, registered with the mailer once per run
 * (Resend: found by its alias or created, and published), or null to send whole copies (the
 * rendering cannot be a template). When the provider does not take it, the reason the run stops:
 * nothing was sent, and a rerun tries again.
 */
export async function templateFor(ctx: BatchContext, content: DigestContent): Promise<{ template: PreparedTemplate | null } | { stop: string }> {
  ctx.templates ??= new Map();
  if (ctx.templates.has(content.contentHash)) return { template: ctx.templates.get(content.contentHash)! };
  const template = digestTemplateOf(content);
  if (!template) {
    ctx.templates.set(content.contentHash, null);
    return { template: null };
  }
  const outcome = await ctx.mailer.prepareTemplate(template, { signal: ctx.signal });
  // Worded as a failed batch's stop is: the run stops, nothing was sent, a rerun tries again.
  if (!outcome.ok) {
    if (outcome.fatal) return { stop: `the provider refused the sender: ${outcome.reason}` };
    return { stop: outcome.permanent ? `the provider refused the e-mail's template: ${outcome.reason}` : `the provider kept failing: ${outcome.reason}` };
  }
  ctx.templates.set(content.contentHash, outcome.template);
  return { template: outcome.template };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resend's answer while another request under the key is being processed: that one may go out. */
const isRequestInProgress = (reason: string) => reason.startsWith('concurrent_idempotent_requests');

/** Resend's answer when a key comes back with another body: the first request may have gone out. */
const isIdempotencyConflict = (reason: string) => reason.startsWith('invalid_idempotent_request');

export function unknownBatchOf(batch: Pick<DigestBatch, 'id' | 'recapDate' | 'sequence' | 'subscriberIds'>, reason: string): UnknownBatch {
  return { id: batch.id, recapDate: batch.recapDate, sequence: batch.sequence, recipients: batch.subscriberIds.length, reason, settle: settleCommands(batch.id) };
}

async function markUnknown(ctx: BatchContext, batch: DigestBatch, reason: string): Promise<void> {
  await ctx.store.markDigestBatchUnknown(batch.id, reason);
  ctx.tally.unknown.push({ ...unknownBatchOf(batch, reason), madeThisRun: true });
  ctx.warn?.(`Batch ${batch.id} (${plural(batch.subscriberIds.length, 'recipient')}) is unknown: ${reason}`);
}

/** Closes a batch, retrying a flaky store; why it could not, or null. */
async function settle(ctx: BatchContext, batch: DigestBatch, write: () => Promise<boolean>): Promise<string | null> {
  for (let attempt = 1; ; attempt++) {
    try {
      await write();
      return null;
    } catch (error) {
      if (attempt >= RECORD_ATTEMPTS) {
        return `the provider answered batch ${batch.id} but the database did not record it (${error instanceof Error ? error.message : String(error)}); it stays pending, and a rerun within 24 h repeats it with the same idempotency key, which the provider does not send twice`;
      }
      ctx.warn?.(`Recording batch ${batch.id} failed (try ${attempt} of ${RECORD_ATTEMPTS}); retrying`);
      await (ctx.pause ?? sleep)(500 * 2 ** attempt);
    }
  }
}

/**
 * Sends a written batch with its messages (in its order) under `idempotencyKey` and records the
 * answer. Returns why the run must stop, or null to go on.
 */
export async function sendAndRecord(
  ctx: BatchContext,
  batch: DigestBatch,
  messages: BatchMessage[],
  idempotencyKey = batch.idempotencyKey,
  keyWindow: KeyWindow = { since: batch.createdAt, state: 'pending' },
  fallbacks: ConflictFallbacks = {},
): Promise<string | null> {
  let vetoed: { reason: string; tooOld: boolean } | null = null;
  const outcome = await ctx.mailer.sendBatch(messages, {
    idempotencyKey,
    signal: ctx.signal,
    beforeAttempt: async () => {
      vetoed = await attemptVeto(ctx, batch, keyWindow);
      return vetoed?.reason ?? null;
    },
  });
  if (vetoed) return afterVeto(ctx, batch, vetoed);
  const failures = outcome.results.flatMap((result, index) =>
    result.status === 'failed' ? [{ id: batch.subscriberIds[index]!, reason: result.reason, permanent: result.permanent, uncertain: result.uncertain === true }] : [],
  );

  const conflict = failures.find((f) => isIdempotencyConflict(f.reason));
  if (conflict && fallbacks.wholeCopies) return sendAndRecord(ctx, batch, fallbacks.wholeCopies(), idempotencyKey, keyWindow, { afterConflict: fallbacks.afterConflict });
  if (conflict && fallbacks.afterConflict) return fallbacks.afterConflict();
  if (conflict) {
    await markUnknown(ctx, batch, `the provider refused to repeat it under its key (${conflict.reason})`);
    return null;
  }
  // Unavailable or rate limited past the retry budget. They count as failed in this run's report,
  // which says what happened to its requests.
  const transient = failures.find((f) => !f.permanent && !outcome.fatal);
  if (transient) {
    for (const f of failures) ctx.tally.fail(f.reason);
    // A request that may have gone through (no answer, a gateway error) leaves the batch pending,
    // for a rerun to repeat under the same key. The first request of a batch that every attempt saw
    // refused (rate limited) surely sent nothing: it is closed as failed, so the next try writes its
    // readers into a new batch under a new key, which a refusal of the sender lasting past the
    // provider's 24 hours cannot turn unknown.
    if (keyWindow.justWritten && !failures.some((f) => f.uncertain || isRequestInProgress(f.reason))) {
      const unrecorded = await settle(ctx, batch, () => ctx.store.settleDigestBatch(batch.id, { state: 'failed', failure: { reason: transient.reason, recipients: failures.map(({ id, reason }) => ({ id, reason })) }, at: ctx.now() }));
      if (unrecorded) return unrecorded;
    }
    return `the provider kept failing: ${transient.reason}`;
  }

  const accepted = outcome.results.flatMap((result, index) =>
    result.status === 'accepted' ? [{ subscriberId: batch.subscriberIds[index]!, providerMessageId: result.providerId }] : [],
  );
  const failure: BatchFailure | null =
    failures.length === 0 ? null : { reason: outcome.fatal ?? failures[0]!.reason, recipients: failures.map(({ id, reason }) => ({ id, reason })) };
  const at = ctx.now();
  const unrecorded = await settle(ctx, batch, () =>
    accepted.length > 0 || failure === null
      ? ctx.store.settleDigestBatch(batch.id, { state: 'sent', accepted, failure, at })
      : ctx.store.settleDigestBatch(batch.id, { state: 'failed', failure, at }),
  );
  if (unrecorded) return unrecorded;
  ctx.tally.sent += accepted.length;
  for (const f of failures) ctx.tally.fail(f.reason);
  if (outcome.fatal) return `the provider refused the sender: ${outcome.fatal}`;
  return null;
}

/** What to try when the provider says the key was used with another body. */
export interface ConflictFallbacks {
  /**
   * The batch as whole copies, when the messages go through a template: a batch first sent by a
   * version that sent whole copies has its key bound to them, so they are tried once under the key.
   */
  wholeCopies?: () => BatchMessage[];
  /** Tried last, instead of leaving the batch unknown. */
  afterConflict?: () => Promise<string | null>;
}

/** When the key was first used (the batch's writing, or the settle command's new key) and the state the batch must still be in. */
export interface KeyWindow {
  since: Date;
  state: BatchState;
  /** The run wrote the batch a moment ago, under its lease: its first request is this run's. */
  justWritten?: boolean;
}

/**
 * Right before each attempt: the batch must still be in the state it was sent from (nobody settled
 * it meanwhile, e.g. with --settle) and its key younger than LAST_ATTEMPT_AGE_MS, so the provider
 * still knows the key whenever this attempt and its retries arrive. The look records the batch's
 * first attempt before its request leaves. Null to go ahead.
 */
async function attemptVeto(ctx: BatchContext, batch: DigestBatch, window: KeyWindow): Promise<{ reason: string; tooOld: boolean } | null> {
  const now = ctx.now();
  const ageMs = now.getTime() - window.since.getTime();
  if (ageMs >= LAST_ATTEMPT_AGE_MS) {
    return { reason: `it was written ${(ageMs / 3_600_000).toFixed(1)} h ago and never confirmed; an attempt now could reach the provider after it forgets the idempotency key (${PROVIDER_IDEMPOTENCY_WINDOW_MS / 3_600_000} h), so repeating it could send it twice`, tooOld: true };
  }
  const state = await ctx.store.beginDigestBatchAttempt(batch.id, now);
  if (state !== window.state) return { reason: `batch ${batch.id} is ${state ?? 'gone'} now, settled elsewhere`, tooOld: false };
  return null;
}

/**
 * A vetoed attempt. Too old: a pending batch becomes unknown when an earlier attempt may have gone
 * out, and is closed for a new plan when none ever left; anything else stops with the reason.
 * Settled elsewhere meanwhile: nothing more to do.
 */
async function afterVeto(ctx: BatchContext, batch: DigestBatch, vetoed: { reason: string; tooOld: boolean }): Promise<string | null> {
  if (!vetoed.tooOld) {
    ctx.warn?.(`Batch ${batch.id} not sent: ${vetoed.reason}`);
    return null;
  }
  const current = await ctx.store.findDigestBatch(batch.id);
  if (current?.state !== 'pending') return `batch ${batch.id} not sent: ${vetoed.reason}`;
  if (current.attemptedAt === null) return closeUntried(ctx, current);
  await markUnknown(ctx, batch, vetoed.reason);
  return null;
}

/**
 * A pending batch no attempt ever left for: the run that wrote it stopped before its first request.
 * Its key was never used, so nothing of it can have reached a reader; it is closed as failed and
 * its readers are planned again under a new key, however long ago it was written.
 */
async function closeUntried(ctx: BatchContext, batch: DigestBatch): Promise<string | null> {
  ctx.warn?.(`Batch ${batch.id} (${plural(batch.subscriberIds.length, 'recipient')}) was written by a run that stopped before trying it; its readers are planned again under a new key`);
  const failure = { reason: 'never tried: the run that wrote it stopped before its first request' };
  await ctx.store.settleDigestBatch(batch.id, { state: 'failed', failure, at: ctx.now() });
  return null;
}

/**
 * Settles a batch left pending by an earlier run: inside the provider's window it is repeated
 * exactly (stored key, content, and the recipients still on the list), so the provider answers
 * from its cache whatever went out; past it, or when it cannot be rebuilt, it becomes unknown.
 * One never tried is closed for a new plan, at any age. Returns why the run must stop, or null.
 */
export async function settlePendingBatch(ctx: BatchContext, batch: DigestBatch): Promise<string | null> {
  const ageMs = ctx.now().getTime() - batch.createdAt.getTime();
  if (ageMs >= LAST_ATTEMPT_AGE_MS && batch.attemptedAt === null) return closeUntried(ctx, batch);
  if (ageMs >= LAST_ATTEMPT_AGE_MS) {
    await markUnknown(ctx, batch, `it was written ${(ageMs / 3_600_000).toFixed(1)} h ago and never confirmed; the provider forgets its idempotency key after ${PROVIDER_IDEMPOTENCY_WINDOW_MS / 3_600_000} h, so repeating it could send it twice`);
    return null;
  }
  const [content, recipients] = await Promise.all([ctx.store.findDigestContent(batch.contentHash), ctx.store.digestRecipients(batch.subscriberIds)]);
  // The same template as the first attempt: its alias comes from the stored rendering.
  const prepared = content ? await templateFor(ctx, content) : { template: null };
  if ('stop' in prepared) return prepared.stop;
  const rebuilt = rebuildMessages(content, batch.subscriberIds, recipients, ctx.unsubscribeSecret, prepared.template);
  if ('problem' in rebuilt) {
    await markUnknown(ctx, batch, `it cannot be repeated exactly: ${rebuilt.problem}`);
    return null;
  }
  const whole = () => (rebuildMessages(content, batch.subscriberIds, recipients, ctx.unsubscribeSecret) as { messages: BatchMessage[] }).messages;
  const exactRepeat = () =>
    sendAndRecord(ctx, batch, rebuilt.messages, batch.idempotencyKey, { since: batch.createdAt, state: 'pending' }, prepared.template ? { wholeCopies: whole } : {});
  // Whoever left since it was written (unsubscribed, bounced, complained) is left out of the repeat:
  // the first request may never have reached the provider, and then the repeat is what would mail
  // them. When it did reach it, the provider refuses the shorter body under the same key; the
  // batch is then repeated exactly, which the provider answers from its cache without sending
  // anything. The batch keeps them as its record either way.
  const staying = stillOnTheList(batch.subscriberIds, recipients);
  if (staying.left === 0) {
    ctx.warn?.(`Repeating batch ${batch.id} (${plural(batch.subscriberIds.length, 'recipient')}), left pending by an earlier run, with its stored idempotency key`);
    return exactRepeat();
  }
  if (staying.ids.length === 0) {
    ctx.tally.skippedUnsubscribed += staying.left;
    ctx.warn?.(`Batch ${batch.id}, left pending by an earlier run, is not repeated: every one of its recipients has left since`);
    return settle(ctx, batch, () => ctx.store.settleDigestBatch(batch.id, { state: 'sent', accepted: [], failure: { reason: 'every recipient left before it was repeated' }, at: ctx.now() }));
  }
  ctx.warn?.(`Repeating batch ${batch.id} (${plural(staying.ids.length, 'recipient')}, leaving out ${plural(staying.left, 'recipient')} who left since), left pending by an earlier run, with its stored idempotency key`);
  let leftOut = staying.left;
  const stop = await sendAndRecord(ctx, { ...batch, subscriberIds: staying.ids }, staying.keep(rebuilt.messages), batch.idempotencyKey, { since: batch.createdAt, state: 'pending' }, {
    wholeCopies: prepared.template ? () => staying.keep(whole()) : undefined,
    afterConflict: () => {
      leftOut = 0;
      ctx.warn?.(`Batch ${batch.id} reached the provider before; repeating it exactly, which the provider answers from its cache`);
      return exactRepeat();
    },
  });
  ctx.tally.skippedUnsubscribed += leftOut;
  return stop;
}

/** Every open batch of the recap, oldest first: pending ones settled, unknown ones reported. */
export async function settleOpenBatches(ctx: BatchContext, recapDate: string): Promise<string | null> {
  for (const batch of await ctx.store.openDigestBatches(recapDate)) {
    if (batch.state === 'unknown') {
      ctx.tally.unknown.push(unknownBatchOf(batch, batch.failure?.reason ?? 'not settled'));
      continue;
    }
    if (ctx.signal?.aborted) return 'stopped on request';
    const stop = await settlePendingBatch(ctx, batch);
    if (stop) return stop;
  }
  return null;
}
