// Picks the mail backend from the configuration: Resend when a key is set, else the outbox.
// Each backend is loaded only when chosen: the outbox's MIME library alone is a large share of memory
// that a process sending through Resend never needs.
import type { MailerConfig } from '../config.ts';
import type { DeliveryPolicy } from './delivery-policy.ts';
import type { Mailer } from './types.ts';

export async function createMailer(config: MailerConfig, options: { policy?: Partial<DeliveryPolicy> } = {}): Promise<Mailer> {
  switch (config.kind) {
    case 'resend': {
      const { ResendMailer } = await import('./resend.ts');
      return new ResendMailer({ apiKey: config.apiKey, baseUrl: config.baseUrl, from: config.from, policy: options.policy });
    }
    case 'outbox': {
      const { OutboxMailer } = await import('./outbox.ts');
      return new OutboxMailer({ dir: config.dir, from: config.from });
    }
  }
}

export type { BatchOutcome, Mailer, MessageOutcome, OutgoingMessage, SendOptions } from './types.ts';
