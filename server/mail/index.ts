// Picks the mail backend from the configuration: Resend when a key is set, else the outbox.
import type { MailerConfig } from '../config.ts';
import type { DeliveryPolicy } from './delivery-policy.ts';
import { OutboxMailer } from './outbox.ts';
import { ResendMailer } from './resend.ts';
import type { Mailer } from './types.ts';

export function createMailer(config: MailerConfig, options: { policy?: Partial<DeliveryPolicy> } = {}): Mailer {
  switch (config.kind) {
    case 'resend':
      return new ResendMailer({ apiKey: config.apiKey, baseUrl: config.baseUrl, from: config.from, policy: options.policy });
    case 'outbox':
      return new OutboxMailer({ dir: config.dir, from: config.from });
  }
}

export type { BatchOutcome, Mailer, MessageOutcome, OutgoingMessage, SendOptions } from './types.ts';
