// For a CLI that runs alone (npm run digest): deliver whatever the mail outbox holds that is due
// (a confirmation promised while the server was down, an operator notice), once, within a bound.
// The server's own worker does the same continuously; both may run, claims never overlap.
import { systemClock, type Clock, type TimerHandle } from '../clock.ts';
import type { Config } from '../config.ts';
import type { OperatorNoticeStore } from './operator-notice.ts';
import type { MailOutboxStore } from '../store/mail-outbox.ts';
import { subscriberMail } from './subscriber-mail.ts';
import { createMailer } from './index.ts';
import { createOutboxWorker, OUTBOX_DELIVERY_POLICY, type OutboxLog } from './outbox-worker.ts';

export async function deliverQueuedMail(options: {
  store: MailOutboxStore & OperatorNoticeStore;
  config: Pick<Config, 'mailer' | 'siteUrl' | 'unsubscribeSecret' | 'outbox' | 'operatorEmail' | 'noticeWebhookUrl'>;
  log: OutboxLog;
  timeoutMs?: number;
  clock?: Clock;
}): Promise<number> {
  const { store, config, log, timeoutMs = 60_000, clock = systemClock } = options;
  const worker = createOutboxWorker({
    store,
    mailer: () => createMailer(config.mailer, { policy: OUTBOX_DELIVERY_POLICY }),
    compose: subscriberMail({ siteUrl: config.siteUrl, secret: config.unsubscribeSecret }),
    log,
    ...config.outbox,
    operatorEmail: config.operatorEmail,
    noticeWebhook: Boolean(config.noticeWebhookUrl),
    clock,
  });
  let timer: TimerHandle | undefined;
  const bound = new Promise<number>((resolve) => {
    timer = clock.setTimer(() => resolve(0), timeoutMs);
  });
  try {
    return await Promise.race([worker.deliverDue(), bound]);
  } finally {
    timer?.cancel();
    await worker.stop();
  }
}
