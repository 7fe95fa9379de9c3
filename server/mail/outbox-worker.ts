// Delivers the durable outbox (store/mail-outbox.ts): claims due messages under a lease, sends each
// under its own idempotency key (`outbox/<random id>/<generation>`, so a repeat after a crash, a lost
// answer or an expired lease is answered from the provider's cache, never sent twice, and a restored
// or copied database never reuses a key the provider still holds), and settles it under its claim
// token: sent; retrying with exponential back-off when the provider or the network failed; failed
// when the provider refused the message (a confirmation then gives its throttle back); unknown on a
// 409 under its own key (an earlier try was very likely accepted). A message gets a fresh key
// generation from the claim when the old key is about to expire, so it waits as long as it takes
// and never fails for its age; when a try under the old key had no answer, the next one may be a
// second copy, and the log says so: for a confirmation or a notice, two copies beat none.
// A refusal of the sender itself (a refused key, a used-up quota) is no fault of the message: every
// claimed message is held (retrying, never failed) with a growing pause, the hold is recorded in
// the store (the report shows it), and the operator is told once per hold, in the log at warn level
// and by e-mail (queued like the rest). A send is abandoned before its claim runs out, so no other
// worker can take it mid-send. It runs in the server process and in the CLIs when they run alone;
// any number of workers may run at once, since a claim skips rows another worker holds.
import { systemClock, type Clock, type TimerHandle } from '../clock.ts';
import { queuedNoticeOf, queueOperatorNotice, type NoticeRecipients, type OperatorNotice, type OperatorNoticeStore } from './operator-notice.ts';
import type { ComposeMail } from './subscriber-mail.ts';
import { OUTBOX_KEY_LIFE_SECONDS, type MailOutboxStore, type OutboxMessage, type OutboxSettlement, type SenderRefusalCause } from '../store/mail-outbox.ts';
import type { DeliveryPolicy } from './delivery-policy.ts';
import { senderHoldWords, senderRefusalCause } from './sender-refusal.ts';
import type { Mailer } from './types.ts';

/**
 * The provider policy of the outbox's own mailer: few tries per claim (the outbox retries across
 * claims, for as long as it takes), and short enough that one send always ends inside its lease.
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
  store: MailOutboxStore & OperatorNoticeStore;
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
  /** OPERATOR_EMAIL: told once per hold when the provider refuses the sender (the log says it either way). */
  operatorEmail?: string;
  /** NOTICE_WEBHOOK_URL is set: that notice is posted there too. */
  noticeWebhook?: boolean;
  /** Polls, retry times and key lives all go by it; the system clock unless a test moves its own. */
  clock?: Clock;
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
  store: MailOutboxStore & OperatorNoticeStore;
  compose: ComposeMail;
  log: OutboxLog;
  leaseSeconds: number;
  retryFirstSeconds: number;
  retryMaxSeconds: number;
  clock: Clock;
  signal: AbortSignal;
}

async function settle({ store, log, clock }: Delivery, row: OutboxMessage, settlement: OutboxSettlement): Promise<void> {
  if (!(await store.settleMail(row, settlement, clock.now()))) {
    // Its lease ran out and another worker holds it now: that worker settles it.
    log.warn(`outbox: ${row.kind} #${row.id} was claimed again meanwhile; this worker's ${settlement.state} is dropped`);
    return;
  }
  if (settlement.state === 'sent') log.info(`outbox: ${row.kind} #${row.id} sent (try ${row.attempts})`);
  else if (settlement.state === 'retrying') log.warn(`outbox: ${row.kind} #${row.id} not sent (try ${row.attempts}), retrying in ${settlement.retrySeconds}s: ${settlement.error}`);
  else log.warn(`outbox: ${row.kind} #${row.id} ${settlement.state}: ${settlement.error}`);
}

/** What one try came to: settled (sent or not), or the provider refused the sender (the row is not settled yet). */
type TryResult = { refusedSender: null; sent: boolean } | { refusedSender: string; uncertain: boolean };
const SETTLED: TryResult = { refusedSender: null, sent: false };

/** Another request with this key carried other content: the first try very likely went out. */
const isIdempotencyConflict = (reason: string) => reason.startsWith('invalid_idempotent_request');

/**
 * One try at one claimed message, and its settlement. `sendBy`: when the claim stops being surely
 * ours (three quarters of the lease); the request is abandoned then and the message retried.
 */
async function deliver(ctx: Delivery, row: OutboxMessage, mailer: Mailer, sendBy: number): Promise<TryResult> {
  if (row.repeatPossible) {
    ctx.log.warn(
      `outbox: ${row.kind} #${row.id} is tried under a fresh key: an earlier try had no answer and the provider forgets a key after 24 hours, so ${row.kind === 'operator' ? 'the operator' : 'the reader'} may get two copies rather than none`,
    );
  }
  const composed = await ctx.compose(row, mailer.from);
  if (composed.kind === 'cancel') {
    await settle(ctx, row, { state: 'cancelled', error: composed.reason });
    return SETTLED;
  }
  const deadline = AbortSignal.timeout(Math.max(1, sendBy - ctx.clock.now().getTime()));
  const { results, fatal } = await mailer.sendBatch([composed.message], { idempotencyKey: row.key, signal: ctx.signal, deadline });
  const result = results[0]!;
  if (result.status === 'accepted') {
    await settle(ctx, row, { state: 'sent', providerId: result.providerId });
    return { refusedSender: null, sent: true };
  }
  if (fatal) return { refusedSender: fatal, uncertain: result.uncertain ?? false };
  // As the digest settles it: a 409 under the message's own key means an earlier try with this key
  // was accepted, so the message very likely went out. It is not known: neither failed (its
  // confirmation throttle is kept) nor counted sent, and never tried again, which could be a second copy.
  if (isIdempotencyConflict(result.reason)) {
    await settle(ctx, row, { state: 'unknown', error: `very likely sent: the provider holds an earlier try under its key, so it is not tried again (${result.reason})` });
    return SETTLED;
  }
  if (result.permanent) {
    await settle(ctx, row, { state: 'failed', error: result.reason });
    return SETTLED;
  }
  // Stopping: hand it back now, for the next process to pick up without waiting.
  const retrySeconds = ctx.signal.aborted ? 0 : retryDelaySeconds(row.attempts, ctx.retryFirstSeconds, ctx.retryMaxSeconds);
  await settle(ctx, row, { state: 'retrying', error: result.reason, retrySeconds, uncertain: result.uncertain ?? false });
  return SETTLED;
}

/**
 * While the provider refuses the sender, every message waits: the refusals in a row set the pause
 * (the outbox's own back-off), and the store records the hold, so the operator is told once per
 * hold whichever worker meets it first, and the report shows it until mail flows again.
 */
class SenderHold {
  private refusals = 0;

  constructor(
    private readonly ctx: Delivery,
    private readonly noticeTo: NoticeRecipients,
  ) {}

  /** The pause before the next try of every message, after one more refusal. */
  nextPause(): number {
    this.refusals++;
    return retryDelaySeconds(this.refusals, this.ctx.retryFirstSeconds, this.ctx.retryMaxSeconds);
  }

  /**
   * Records the hold with the operator's notice, in one statement, so a worker dying in between
   * cannot leave a hold nobody is told of; told once per hold, by whichever worker meets it first.
   */
  async refused(reason: string, pause: number): Promise<void> {
    const cause = senderRefusalCause(reason);
    const notice = this.notice(cause, reason, pause);
    const begins = await this.ctx.store.holdSender(cause, reason, this.ctx.clock.now(), queuedNoticeOf(this.noticeTo, notice)).catch((error: unknown) => {
      this.ctx.log.warn(`outbox: the hold could not be recorded: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    });
    if (begins) this.log(notice);
    // Unrecorded, it is told (in the log at least) rather than kept quiet.
    else if (begins === null && this.refusals === 1) {
      this.log(notice);
      await queueOperatorNotice(this.ctx.store, this.noticeTo, notice).catch((error: unknown) => {
        this.ctx.log.warn(`outbox: the operator's notice could not be queued: ${error instanceof Error ? error.message : String(error)}`);
      });
    }
  }

  /** Mail went out: any hold is over. */
  async accepted(): Promise<void> {
    this.refusals = 0;
    const ended = await this.ctx.store.releaseSender();
    if (ended) this.ctx.log.info(`outbox: the provider accepts mail again; held since ${ended.since.toISOString()} because ${senderHoldWords(ended.cause).cause}`);
  }

  /**
   * The operator's notice of a hold. Its e-mail is held like the rest until the sender is accepted
   * again; the log line, the report and the webhook say it meanwhile.
   */
  private notice(cause: SenderRefusalCause, reason: string, pause: number): OperatorNotice {
    const words = senderHoldWords(cause);
    const text = [
      `The mail provider refused the sender: ${words.cause} (${reason}).`,
      words.remedy,
      `Every queued e-mail (confirmations, fresh links, welcomes, notices) is held, none is failed, and tried again in ${pause} s, then with growing pauses up to ${this.ctx.retryMaxSeconds} s; once the provider accepts mail they go out by themselves, each once. The report shows the hold meanwhile.`,
    ].join('\n');
    return { subject: words.subject, text };
  }

  private log(notice: OperatorNotice): void {
    this.ctx.log.warn(`outbox: ${notice.text.replaceAll('\n', ' ')}`);
  }
}

interface Pass {
  batchSize: number;
  /** How long a key may be used from its first try. */
  keySeconds: number;
  mailer: () => Promise<Mailer>;
  hold: SenderHold;
}

/**
 * Claims up to a batch of due messages and tries each; `more` when a full batch went through and
 * more may be due. After a refusal of the sender, past three quarters of the lease, or when
 * stopping, the rest of the batch goes back untried.
 */
async function deliverBatch(ctx: Delivery, { batchSize, keySeconds, mailer: makeMailer, hold }: Pass): Promise<{ settled: number; more: boolean }> {
  const { store, clock, signal } = ctx;
  const claimedAt = clock.now();
  const rows = await store.claimMail(batchSize, ctx.leaseSeconds, { now: claimedAt, keySeconds });
  if (rows.length === 0) return { settled: 0, more: false };
  const mailer = await makeMailer().catch(async (error: unknown) => {
    // Nothing went out: hand the claims back as surely unsent, rather than let their leases run
    // out, which would count them as tries of unknown outcome.
    for (const row of rows) await store.settleMail(row, { state: 'retrying', error: 'handed back unsent: no mailer', retrySeconds: 0 }, clock.now());
    throw error;
  });
  const sendBy = claimedAt.getTime() + ctx.leaseSeconds * 750;
  let settled = 0;
  let anySent = false;
  let heldSeconds: number | null = null;
  for (const row of rows) {
    if (heldSeconds !== null || signal.aborted || clock.now().getTime() > sendBy) {
      const error = heldSeconds !== null ? 'held: the provider refused the sender' : 'handed back unsent';
      await store.settleMail(row, { state: 'retrying', error, retrySeconds: heldSeconds ?? 0 }, clock.now());
      continue;
    }
    const tried = await deliver(ctx, row, mailer, sendBy);
    if (tried.refusedSender === null) {
      anySent ||= tried.sent;
      settled++;
      continue;
    }
    heldSeconds = hold.nextPause();
    const error = `held: the provider refused the sender: ${tried.refusedSender}`;
    // The provider's answer is settled first: a process that dies before the hold is recorded loses
    // only that record, which the next refusal makes again, not the answer (its lease running out
    // would count the try as one of unknown outcome).
    await store.settleMail(row, { state: 'retrying', error, retrySeconds: heldSeconds, uncertain: tried.uncertain }, clock.now());
    await hold.refused(tried.refusedSender, heldSeconds);
  }
  if (anySent) await hold.accepted();
  return { settled, more: rows.length === batchSize && heldSeconds === null && !signal.aborted };
}

export function createOutboxWorker(options: OutboxWorkerOptions): OutboxWorker {
  const { store, log } = options;
  const poll = (options.pollSeconds ?? OUTBOX_DEFAULTS.pollSeconds) * 1000;
  const lease = options.leaseSeconds ?? OUTBOX_DEFAULTS.leaseSeconds;
  const max = options.retryMaxSeconds ?? OUTBOX_DEFAULTS.retryMaxSeconds;
  const batchSize = options.batchSize ?? 10;
  const clock = options.clock ?? systemClock;
  // A try ends within its lease, so a key is used at most until one lease before the provider forgets it.
  const keySeconds = OUTBOX_KEY_LIFE_SECONDS - lease;
  const stopping = new AbortController();
  const ctx: Delivery = {
    store,
    compose: options.compose,
    log,
    leaseSeconds: lease,
    retryFirstSeconds: options.retryFirstSeconds ?? Math.min(OUTBOX_DEFAULTS.retryFirstSeconds, max),
    retryMaxSeconds: max,
    clock,
    signal: stopping.signal,
  };
  const batch: Pass = { batchSize, keySeconds, mailer: options.mailer, hold: new SenderHold(ctx, { email: options.operatorEmail, webhook: options.noticeWebhook }) };
  let timer: TimerHandle | null = null;
  let running: Promise<number> | null = null;
  let again = false;
  let polling = false;

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
          const { settled, more } = await deliverBatch(ctx, batch);
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
    // The timer's promise is returned, so a manual clock waits for the pass before moving on.
    timer = clock.setTimer(() => deliverDue().finally(schedule), poll);
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
      timer?.cancel();
      await running;
    },
  };
}
