// The operator's notices (a missed or late Monday, mail held by the provider) go to OPERATOR_EMAIL,
// to NOTICE_WEBHOOK_URL, to both or to neither; the log has every one of them either way.
import type { MailOutboxStore, QueuedNotice } from '../store/mail-outbox.ts';
import type { NoticeWebhookStore } from '../store/notice-webhooks.ts';

export interface NoticeRecipients {
  /** OPERATOR_EMAIL. */
  email?: string;
  /** NOTICE_WEBHOOK_URL is set (the server's poster takes the queued posts). */
  webhook?: boolean;
}

export interface OperatorNotice {
  subject: string;
  text: string;
}

export type OperatorNoticeStore = Pick<MailOutboxStore, 'enqueueMail'> & Pick<NoticeWebhookStore, 'queueNoticePost'>;

/**
 * Where the operator reads a notice. With an address it is an outbox e-mail, whose row also queues
 * the webhook's post (a trigger, so a process that knows nothing of the webhook still has it
 * posted); without one, only the webhook's post, worded as that trigger words it. Null when
 * neither is set.
 */
export function queuedNoticeOf(to: NoticeRecipients, notice: OperatorNotice): QueuedNotice | null {
  if (to.email) return { email: { to: to.email, subject: notice.subject, text: notice.text } };
  if (to.webhook) return { webhookText: `${notice.subject}\n\n${notice.text}` };
  return null;
}

/** Queues a notice where the operator reads it (queuedNoticeOf); false when nowhere is set. */
export async function queueOperatorNotice(store: OperatorNoticeStore, to: NoticeRecipients, notice: OperatorNotice): Promise<boolean> {
  const queued = queuedNoticeOf(to, notice);
  if (queued?.email) await store.enqueueMail('operator', null, { ...queued.email });
  else if (queued) await store.queueNoticePost(queued.webhookText);
  return queued !== null;
}
