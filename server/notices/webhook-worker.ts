// Posts every operator notice to NOTICE_WEBHOOK_URL as {"text": …}, which Slack and Discord
// incoming webhooks take as is. The posts are queued by the database in the transaction that records
// the notice (store/notice-webhooks.ts); this worker claims due ones under a lease, posts each with
// the header `Idempotency-Key: notice/<id>` (a receiver that keeps keys can drop a repeat after a
// crash between the post and its settlement), and settles it: sent on a 2xx, else tried again with
// a doubling pause. It never touches the mail provider, so the chat still hears of an outage of it.
// A notice still unposted after a day is closed as expired: by then it is old news.
import { systemClock, type Clock, type TimerHandle } from '../clock.ts';
import type { NoticePost, NoticeWebhookStore } from '../store/notice-webhooks.ts';

export const NOTICE_WEBHOOK_DEFAULTS = {
  pollSeconds: 5,
  leaseSeconds: 60,
  retryFirstSeconds: 5,
  retryMaxSeconds: 120,
  maxAgeSeconds: 24 * 60 * 60,
  requestTimeoutMs: 10_000,
};

export interface NoticeWebhookLog {
  info(line: string): void;
  warn(line: string): void;
}

export interface NoticeWebhookOptions {
  store: NoticeWebhookStore;
  url: string;
  log: NoticeWebhookLog;
  clock?: Clock;
  /** How often an idle worker looks for due posts (one query each time). */
  pollSeconds?: number;
  /** How long a claim keeps other workers (replicas) off a post; longer than one request may take. */
  leaseSeconds?: number;
  retryFirstSeconds?: number;
  retryMaxSeconds?: number;
  maxAgeSeconds?: number;
  requestTimeoutMs?: number;
}

export interface NoticeWebhookWorker {
  start(): void;
  /** Posts what is due now; resolves with how many were posted. */
  deliverDue(): Promise<number>;
  /** Stops polling and waits for the post in flight. */
  stop(): Promise<void>;
}

/** What one post came to: null when the webhook took it, else why not. */
async function post(url: string, notice: NoticePost, timeoutMs: number): Promise<string | null> {
  try {
    const answer = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': `notice/${notice.id}` },
      body: JSON.stringify({ text: notice.text }),
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    await answer.body?.cancel();
    return answer.ok ? null : `the webhook answered ${answer.status}`;
  } catch (error) {
    return `the webhook could not be reached: ${error instanceof Error ? error.message : String(error)}`;
  }
}

export function createNoticeWebhookWorker(options: NoticeWebhookOptions): NoticeWebhookWorker {
  const defaults = NOTICE_WEBHOOK_DEFAULTS;
  const settings = {
    pollSeconds: options.pollSeconds ?? defaults.pollSeconds,
    leaseSeconds: options.leaseSeconds ?? defaults.leaseSeconds,
    retryFirstSeconds: options.retryFirstSeconds ?? defaults.retryFirstSeconds,
    retryMaxSeconds: options.retryMaxSeconds ?? defaults.retryMaxSeconds,
    maxAgeSeconds: options.maxAgeSeconds ?? defaults.maxAgeSeconds,
    requestTimeoutMs: options.requestTimeoutMs ?? defaults.requestTimeoutMs,
  };
  // A post never outlives its claim, so no other replica can take it while it is on its way.
  settings.requestTimeoutMs = Math.min(settings.requestTimeoutMs, settings.leaseSeconds * 750);
  const { store, url, log } = options;
  const clock = options.clock ?? systemClock;
  const retryFirst = Math.min(settings.retryFirstSeconds, settings.retryMaxSeconds);
  let timer: TimerHandle | null = null;
  let running: Promise<number> | null = null;
  let polling = false;
  let stopped = false;

  async function pass(): Promise<number> {
    const due = await store.claimNoticePosts(10, settings.leaseSeconds, settings.maxAgeSeconds);
    let posted = 0;
    for (const notice of due) {
      const failure = stopped ? 'handed back unsent: the server is stopping' : await post(url, notice, settings.requestTimeoutMs);
      if (failure === null) {
        await store.settleNoticePost(notice.id, { state: 'sent' });
        posted++;
        continue;
      }
      const retrySeconds = stopped ? 0 : Math.min(settings.retryMaxSeconds, retryFirst * 2 ** (notice.attempts - 1));
      if (!stopped) log.warn(`notice webhook: post ${notice.id} not taken (${failure}); tried again in ${retrySeconds} s`);
      await store.settleNoticePost(notice.id, { state: 'retrying', error: failure, retrySeconds });
    }
    return posted;
  }

  function deliverDue(): Promise<number> {
    running ??= pass()
      .catch((error: unknown) => {
        // The database is down: the posts stay queued, the next poll tries again.
        log.warn(`notice webhook: paused: ${error instanceof Error ? error.message : String(error)}`);
        return 0;
      })
      .finally(() => (running = null));
    return running;
  }

  function schedule(): void {
    if (!polling || stopped) return;
    timer = clock.setTimer(() => deliverDue().finally(schedule), settings.pollSeconds * 1000);
  }

  return {
    start() {
      if (polling || stopped) return;
      polling = true;
      void deliverDue().finally(schedule);
    },
    deliverDue,
    async stop() {
      polling = false;
      stopped = true;
      timer?.cancel();
      await running;
    },
  };
}
