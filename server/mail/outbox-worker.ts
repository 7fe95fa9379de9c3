// Delivers the durable outbox (store/mail-outbox.ts): claims due messages under a lease, sends each
// under the idempotency key `outbox/<id>` (so a repeat after a crash, a lost answer or an expired
// lease is answered from the provider's cache, never sent twice), and settles it: sent; retrying
// with exponential back-off when the provider or the network failed; failed when the provider
// refused it or it could not go out within 24 hours (a confirmation then gives its throttle back).
// It runs in the server process and in the CLIs when they run alone; any number of workers may run
// at once, since a claim skips rows another worker holds.
import type { ComposeMail } from '../subscriber-mail.ts';
import type { MailOutboxStore, OutboxMessage, OutboxSettlement } from '../store/mail-outbox.ts';
import type { DeliveryPolicy } from './delivery-policy.ts';
import type { Mailer } from './types.ts';

/** Resend keeps an idempotency key for 24 hours: after that a repeat could be a second copy. */
export const OUTBOX_MAX_AGE_MS = 24 * 60 * 60 * 1000;

/**
 * The provider policy of the outbox's own mailer: few tries per claim (the outbox retries across
 * claims, for as long as a day), and short enough that one send always ends inside its lease.
 */
export const OUTBOX_DELIVERY_POLICY: Partial<DeliveryPolicy> = {
  maxAttempts: 2,
  maxRateLimitWaits: 3,
  maxRateLimitWaitMs: 5_000,
  requestTimeoutMs: 15_000,
};

export const OUTBOX_DEFAULTS = {
  pollSeconds: 5,
  leaseSeconds: 60,
  retryFirstSeconds: 5,
  retryMaxSeconds: 120,
};

export interface OutboxLog {
  info(line: string): void;
  warn(line: string): void;
}

export interface OutboxWorkerOptions {
  store: MailOutboxStore;
  /** The mailer, made on first use: most passes find nothing to send. */
  mailer: () => Promise<Mailer>;
  compose: ComposeMail;
  log: OutboxLog;
  /** OUTBOX_POLL_SECONDS: how often an idle worker looks for due messages (one query each time). */
  pollSeconds?: number;
  /** OUTBOX_LEASE_SECONDS: how long a claim keeps other workers off a message. */
  leaseSeconds?: number;
  retryFirstSeconds?: number;
  /** OUTBOX_RETRY_MAX_SECONDS: the longest wait between two tries of one message. */
  retryMaxSeconds?: number;
  /** Messages claimed per query. */
  batchSize?: number;
  now?: () => number;
}

export interface OutboxWorker {
  /** Polls every pollSeconds until stopped. */
  start(): void;
  /** Looks for due messages now (after a signup queued one). */
  wake(): void;
  /** One pass or more, until nothing is due now; resolves with how many were settled. */
  deliverDue(): Promise<number>;
  /** Stops polling and waits for the message in flight; an unsent claim is handed back at once. */
  stop(): Promise<void>;
}

/** The wait before try `attempts + 1`: first, doubling, up to max. */
export function retryDelaySeconds(attempts: number, first: number, max: number): number {
  return Math.min(max, first * 2 ** Math.max(0, attempts - 1));
}

interface Delivery {
  store: MailOutboxStore;
  compose: ComposeMail;
  log: OutboxLog;
  leaseSeconds: number;
  retryFirstSeconds: number;
  retryMaxSeconds: number;
  now: () => number;
  signal: AbortSignal;
}

async function settle({ store, log }: Delivery, row: OutboxMessage, settlement: OutboxSettlement): Promise<void> {
  await store.settleMail(row.id, settlement);
  if (settlement.state === 'sent') log.info(`outbox: ${row.kind} #${row.id} sent (try ${row.attempts})`);
  else if (settlement.state === 'retrying') log.warn(`outbox: ${row.kind} #${row.id} not sent (try ${row.attempts}), retrying in ${settlement.retrySeconds}s: ${settlement.error}`);
  else log.warn(`outbox: ${row.kind} #${row.id} ${settlement.state}: ${settlement.error}`);
}

/** One try at one claimed message, and its settlement. */
async function deliver(ctx: Delivery, row: OutboxMessage, mailer: Mailer): Promise<void> {
  // The provider forgets the key after 24 h: a try after that (less one lease, the longest a
  // try can last) might send a copy the provider already sent once.
  if (ctx.now() - row.createdAt.getTime() > OUTBOX_MAX_AGE_MS - ctx.leaseSeconds * 1000) {
    return settle(ctx, row, { state: 'failed', error: `not delivered within 24 hours (${row.attempts - 1} tries)` });
  }
  const composed = await ctx.compose(row, mailer.from);
  if (composed.kind === 'cancel') return settle(ctx, row, { state: 'cancelled', error: composed.reason });
  const { results } = await mailer.sendBatch([composed.message], { idempotencyKey: `outbox/${row.id}`, signal: ctx.signal });
  const result = results[0]!;
  if (result.status === 'accepted') return settle(ctx, row, { state: 'sent', providerId: result.providerId });
  if (result.permanent) return settle(ctx, row, { state: 'failed', error: result.reason });
  // Stopping: hand it back now, for the next process to pick up without waiting.
  const retrySeconds = ctx.signal.aborted ? 0 : retryDelaySeconds(row.attempts, ctx.retryFirstSeconds, ctx.retryMaxSeconds);
  return settle(ctx, row, { state: 'retrying', error: result.reason, retrySeconds });
}

export function createOutboxWorker(options: OutboxWorkerOptions): OutboxWorker {
  const { store, log } = options;
  const poll = (options.pollSeconds ?? OUTBOX_DEFAULTS.pollSeconds) * 1000;
  const lease = options.leaseSeconds ?? OUTBOX_DEFAULTS.leaseSeconds;
  const max = options.retryMaxSeconds ?? OUTBOX_DEFAULTS.retryMaxSeconds;
  const batchSize = options.batchSize ?? 10;
  const now = options.now ?? Date.now;
  const stopping = new AbortController();
  const ctx: Delivery = {
    store,
    compose: options.compose,
    log,
    leaseSeconds: lease,
    retryFirstSeconds: options.retryFirstSeconds ?? Math.min(OUTBOX_DEFAULTS.retryFirstSeconds, max),
    retryMaxSeconds: max,
    now,
    signal: stopping.signal,
  };
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;
  let again = false;
  let polling = false;

  async function pass(): Promise<{ settled: number; more: boolean }> {
    const claimedAt = now();
    const rows = await store.claimMail(batchSize, lease);
    if (rows.length === 0) return { settled: 0, more: false };
    const mailer = await options.mailer();
    let settled = 0;
    for (const row of rows) {
      // Past three quarters of the lease, or stopping: the rest go back to the queue untried.
      if (stopping.signal.aborted || now() - claimedAt > lease * 750) {
        await store.settleMail(row.id, { state: 'retrying', error: 'handed back unsent', retrySeconds: 0 });
        continue;
      }
      await deliver(ctx, row, mailer);
      settled++;
    }
    return { settled, more: rows.length === batchSize && !stopping.signal.aborted };
  }

  function deliverDue(): Promise<number> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let total = 0;
      try {
        do {
          again = false;
          const { settled, more } = await pass();
          total += settled;
          again ||= more;
        } while (again && !stopping.signal.aborted);
      } catch (error) {
        // The database or the mailer is down: the messages stay queued, the next poll tries again.
        log.warn(`outbox: delivery paused: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        running = null;
      }
      return total;
    })();
    return running;
  }

  function schedule(): void {
    if (!polling || stopping.signal.aborted) return;
    timer = setTimeout(() => void deliverDue().finally(schedule), poll);
    timer.unref();
  }

  return {
    start() {
      if (polling) return;
      polling = true;
      void deliverDue().finally(schedule);
    },
    wake() {
      if (!stopping.signal.aborted) void deliverDue();
    },
    deliverDue,
    async stop() {
      polling = false;
      stopping.abort();
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
