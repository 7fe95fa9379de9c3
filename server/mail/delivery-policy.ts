// How hard and how fast we push a mail provider, in one place: pacing from the provider's own
// rate-limit headers, waiting out 429s, exponential back-off with jitter for outages, and the
// bounds that turn "keep trying" into "report it as failed".

export interface DeliveryPolicy {
  /** Tries per call when the provider errs (5xx), the network fails or a request times out. */
  maxAttempts: number;
  /** 429 answers waited out per call before the call is reported as failed. */
  maxRateLimitWaits: number;
  /** The longest single rate-limit wait we accept; a longer retry-after fails the call instead. */
  maxRateLimitWaitMs: number;
  /** First back-off step; it doubles each try, up to maxDelayMs, with random jitter. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A request with no answer by then is abandoned (and retried with the same idempotency key). */
  requestTimeoutMs: number;
}

export const DEFAULT_DELIVERY_POLICY: DeliveryPolicy = {
  maxAttempts: 5,
  maxRateLimitWaits: 10,
  maxRateLimitWaitMs: 120_000,
  baseDelayMs: 1_000,
  maxDelayMs: 30_000,
  requestTimeoutMs: 30_000,
};

/** The largest per-request timeout the digest accepts (`npm run digest -- --timeout SECONDS`). */
export const MAX_REQUEST_TIMEOUT_MS = 600_000;

/**
 * The longest one provider call can take from its first attempt to its last, under a policy: every
 * try (each back-off retry and each rate-limit wait comes after one) running to its timeout, the
 * back-off steps at their full length, every rate-limit wait at its longest. The digest's repeat
 * window is measured against this with the largest --timeout, not assumed (server/mail/digest/send-batch.ts).
 */
export function longestRetryBudgetMs(policy: DeliveryPolicy = { ...DEFAULT_DELIVERY_POLICY, requestTimeoutMs: MAX_REQUEST_TIMEOUT_MS }): number {
  const tries = policy.maxAttempts + policy.maxRateLimitWaits;
  let backoff = 0;
  for (let failure = 1; failure < policy.maxAttempts; failure++) backoff += Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failure - 1));
  return tries * policy.requestTimeoutMs + backoff + policy.maxRateLimitWaits * policy.maxRateLimitWaitMs;
}

/** "Equal jitter": half the exponential step for certain, half at random, so retries spread out. */
export function backoffDelay(attempt: number, policy: Pick<DeliveryPolicy, 'baseDelayMs' | 'maxDelayMs'>, random = Math.random): number {
  const step = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const headerNumber = (headers: Record<string, string> | null, name: string): number | null => {
  const raw = headers?.[name];
  if (raw === undefined || raw.trim() === '') return null;
  const value = Number(raw);
  return Number.isFinite(value) && value >= 0 ? value : null;
};

/**
 * How long a 429 asks us to wait: `retry-after` (seconds or an HTTP date), else
 * `ratelimit-reset` (seconds until the window resets), else one second.
 */
export function rateLimitWaitMs(headers: Record<string, string> | null, now = Date.now()): number {
  const retryAfter = headers?.['retry-after'];
  if (retryAfter !== undefined) {
    const seconds = headerNumber(headers, 'retry-after');
    if (seconds !== null) return seconds * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const reset = headerNumber(headers, 'ratelimit-reset');
  return reset !== null ? reset * 1000 : 1000;
}

/**
 * Paces calls by what the provider advertises on every answer (`ratelimit-limit`,
 * `ratelimit-remaining`, `ratelimit-reset`), so the send rate follows the account's real limit
 * instead of a number written here. Calls are spread evenly over the window (window / limit
 * apart), and once an answer says the allowance is spent, the next call waits until the window
 * has surely turned: one window after the answer that opened it, which came after the window
 * began. Waiting for `ratelimit-reset` instead would idle up to a second per window, as it is
 * whole seconds. A 429 (someone else spending the same allowance) pauses every caller for as long
 * as the provider says.
 */
export class RateGate {
  /** Resend states its limits per second; a provider's first answer in a window may say otherwise. */
  static readonly DEFAULT_WINDOW_MS = 1000;

  private limit: number | null = null;
  private windowMs = RateGate.DEFAULT_WINDOW_MS;
  /** When the answer that opened the current window (remaining = limit − 1) arrived. */
  private windowOpenedAt: number | null = null;
  private spentUntil = 0;
  private lastCallAt = Number.NEGATIVE_INFINITY;
  private pausedUntil = 0;

  constructor(private readonly clock: () => number = Date.now) {}

  observe(headers: Record<string, string> | null): void {
    const limit = headerNumber(headers, 'ratelimit-limit');
    const remaining = headerNumber(headers, 'ratelimit-remaining');
    const reset = headerNumber(headers, 'ratelimit-reset');
    if (limit === null || limit <= 0) return;
    this.limit = limit;
    if (remaining === null) return;
    const now = this.clock();
    // The first call of a window sees the whole window ahead of it: that is the window's length.
    if (remaining === limit - 1) {
      this.windowOpenedAt = now;
      if (reset !== null && reset > 0) this.windowMs = reset * 1000;
    }
    if (remaining <= 0) {
      const opened = this.windowOpenedAt;
      this.spentUntil = opened !== null && now - opened < this.windowMs ? opened + this.windowMs : now + (reset ?? 1) * 1000;
    }
  }

  /** After a 429: nobody calls before the provider said to. */
  pause(ms: number): void {
    this.pausedUntil = Math.max(this.pausedUntil, this.clock() + ms);
  }

  /** The least time between two calls, once the provider has advertised its limit. */
  spacingMs(): number {
    return this.limit === null ? 0 : this.windowMs / this.limit;
  }

  /** How long the next call must wait before it goes out. */
  delayMs(): number {
    return Math.max(0, Math.max(this.pausedUntil, this.spentUntil, this.lastCallAt + this.spacingMs()) - this.clock());
  }

  async wait(signal?: AbortSignal): Promise<void> {
    for (let delay = this.delayMs(); delay > 0; delay = this.delayMs()) await sleep(delay, signal);
    this.lastCallAt = this.clock();
  }

  /** The advertised limit, for progress lines ("10 requests per window"), when known. */
  advertisedLimit(): number | null {
    return this.limit;
  }
}

/** What one try at a provider call came to. */
export type AttemptResult<T> =
  | { kind: 'done'; value: T }
  | { kind: 'rate-limited'; waitMs: number; reason: string }
  // uncertain: no clear answer came (a timeout, a lost connection, a gateway error), so the
  // provider may have accepted it; a repeat is safe only under the same idempotency key.
  | { kind: 'retryable'; reason: string; uncertain?: boolean }
  // Trying this request again cannot help, yet nothing is wrong with what it carries: a later run
  // can send it (e.g. a batch whose template was deleted, which the next run registers again).
  | { kind: 'later-run'; reason: string }
  | { kind: 'permanent'; reason: string; fatal?: boolean };

/** uncertain: some attempt may have been accepted without our knowing (see AttemptResult). */
export type CallResult<T> = { ok: true; value: T } | { ok: false; reason: string; permanent: boolean; fatal?: boolean; uncertain?: boolean };

/**
 * Runs `attempt` until it succeeds or the policy says stop. Rate-limit waits and back-off both
 * go through the gate, so one 429 slows every later call, not just this one.
 */
export async function callWithPolicy<T>(
  attempt: () => Promise<AttemptResult<T>>,
  { policy, gate, signal, beforeAttempt }: { policy: DeliveryPolicy; gate: RateGate; signal?: AbortSignal; beforeAttempt?: () => Promise<string | null> },
): Promise<CallResult<T>> {
  let failures = 0;
  let rateLimitWaits = 0;
  let uncertain = false;
  for (;;) {
    try {
      await gate.wait(signal);
    } catch {
      return { ok: false, reason: 'stopped before the provider accepted it', permanent: false, uncertain };
    }
    // The caller's last word right before a request leaves (the digest re-checks the batch's age).
    const veto = await beforeAttempt?.();
    if (veto) return { ok: false, reason: veto, permanent: false, uncertain };
    let result: AttemptResult<T>;
    try {
      result = await attempt();
    } catch (error) {
      result = { kind: 'retryable', reason: `request failed: ${error instanceof Error ? error.message : String(error)}`, uncertain: true };
    }
    if (result.kind === 'retryable' && result.uncertain) uncertain = true;
    switch (result.kind) {
      case 'done':
        return { ok: true, value: result.value };
      case 'permanent':
        return { ok: false, reason: result.reason, permanent: true, fatal: result.fatal, uncertain };
      case 'later-run':
        return { ok: false, reason: result.reason, permanent: false, uncertain };
      case 'rate-limited': {
        rateLimitWaits++;
        if (rateLimitWaits > policy.maxRateLimitWaits || result.waitMs > policy.maxRateLimitWaitMs) {
          return { ok: false, reason: result.reason, permanent: false, uncertain };
        }
        gate.pause(result.waitMs);
        break;
      }
      case 'retryable': {
        failures++;
        if (failures >= policy.maxAttempts) {
          return { ok: false, reason: `${result.reason} (gave up after ${failures} tries)`, permanent: false, uncertain };
        }
        gate.pause(backoffDelay(failures, policy));
        break;
      }
    }
  }
}
