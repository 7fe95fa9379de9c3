// The embedded default: instead of sending, write each message as an RFC 5322 .eml file (both
// parts, all headers) that any mail client opens. A batch's file names come from its idempotency
// key, so a retried batch finds its files already there and writes nothing twice.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import MailComposer from 'nodemailer/lib/mail-composer';
import { wholeMessage } from './template.ts';
import type { BatchMessage, BatchOutcome, Mailer, MessageOutcome, MessageTemplate, OutgoingMessage, SendOptions, TemplateOutcome } from './types.ts';

export const OUTBOX_BATCH_LIMIT = 100;

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/** Safe in a file name: the recap tag is a date, but nothing here trusts that. */
const fileLabel = (message: BatchMessage) => (message.tags?.recap ?? 'mail').replace(/[^A-Za-z0-9_-]/g, '') || 'mail';

export async function composeEml(message: OutgoingMessage, messageId: string): Promise<Buffer> {
  const composer = new MailComposer({
    from: message.from,
    to: message.to,
    subject: message.subject,
    text: message.text,
    html: message.html,
    headers: message.headers,
    messageId,
    date: new Date(),
  });
  return composer.compile().build();
}

export class OutboxMailer implements Mailer {
  readonly kind = 'outbox';
  readonly maxBatchSize = OUTBOX_BATCH_LIMIT;
  readonly from: string;
  readonly dir: string;

  constructor(options: { dir: string; from: string }) {
    this.dir = options.dir;
    this.from = options.from;
  }

  private async write(name: string, message: OutgoingMessage): Promise<void> {
    const target = join(this.dir, name);
    const eml = await composeEml(message, `<${name.replace(/\.eml$/, '')}@outbox.launched-weekly>`);
    // Write then rename: a crash mid-write never leaves a half file that a retry would take as done.
    const partial = `${target}.${randomBytes(4).toString('hex')}.partial`;
    await writeFile(partial, eml);
    await rename(partial, target);
  }

  /** Nothing to register: each message is filled in here, so its file holds the whole message. */
  async prepareTemplate(template: MessageTemplate): Promise<TemplateOutcome> {
    return { ok: true, template: { ...template, id: template.alias } };
  }

  async sendBatch(messages: readonly BatchMessage[], { idempotencyKey, beforeAttempt }: SendOptions): Promise<BatchOutcome> {
    const batch = createHash('sha256').update(idempotencyKey).digest('hex').slice(0, 16);
    const results: MessageOutcome[] = [];
    const veto = await beforeAttempt?.();
    if (veto) return { results: messages.map(() => ({ status: 'failed', reason: veto, permanent: false })) };
    try {
      await mkdir(this.dir, { recursive: true });
      for (const [index, message] of messages.entries()) {
        const name = `${fileLabel(message)}-${batch}-${String(index + 1).padStart(3, '0')}.eml`;
        if (!(await exists(join(this.dir, name)))) await this.write(name, wholeMessage(message));
        results.push({ status: 'accepted', providerId: name });
      }
      return { results };
    } catch (error) {
      // A full disk or a read-only directory fails every later message the same way.
      const reason = `outbox not writable: ${error instanceof Error ? error.message : String(error)}`;
      while (results.length < messages.length) results.push({ status: 'failed', reason, permanent: false });
      return { results, fatal: reason };
    }
  }

  async send(message: OutgoingMessage): Promise<MessageOutcome> {
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
    const name = `test-${stamp}-${randomBytes(4).toString('hex')}.eml`;
    try {
      await mkdir(this.dir, { recursive: true });
      await this.write(name, message);
      return { status: 'accepted', providerId: name };
    } catch (error) {
      return { status: 'failed', reason: `outbox not writable: ${error instanceof Error ? error.message : String(error)}`, permanent: false };
    }
  }
}
