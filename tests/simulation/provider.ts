// The mail provider of the simulation: an in-process Mailer that keeps what Resend keeps (every
// accepted message, by recipient and idempotency key; a key for 24 hours of the simulation's clock,
// replaying its first answer to the same content and answering 409 to other content) and fails the
// way Resend fails, when the scenario says so. One call of sendBatch stands for the real mailer's
// whole call, its own retries included: a timeout is a request the provider accepted whose answer
// never came back, after the mailer gave up.
import type { BatchMessage, BatchOutcome, Mailer, MessageOutcome, MessageTemplate, OutgoingMessage, PreparedTemplate, SendOptions, TemplateOutcome } from '../../server/mail/types.ts';
import type { Clock } from '../../server/clock.ts';

export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** What the provider does with the next call; 'ok' unless the scenario injects something. */
export type CallFault = 'ok' | 'timeout' | 'rate-limited' | 'server-error' | 'concurrent-409';

export interface AcceptedMessage {
  to: string;
  subject: string;
  key: string;
  /** The digest's week (its `recap` tag), for digest copies. */
  recap: string | null;
  kind: string | null;
  at: Date;
}

interface KeptKey {
  fingerprint: string;
  firstAt: number;
  answer: BatchOutcome;
}

export interface ProviderEvent {
  at: string;
  replica: string;
  key: string;
  messages: number;
  answer: string;
}

const fingerprintOf = (messages: readonly BatchMessage[]) =>
  JSON.stringify(messages.map((m) => ('template' in m ? [m.to, m.subject, m.template.alias, m.variables] : [m.to, m.subject, m.text])));

const subjectOf = (message: BatchMessage) => ('template' in message ? message.template.subject : message.subject);

/**
 * Every message of a call failed. `uncertain` as the Resend mailer classifies the answer: no answer
 * (a timeout), a server error or another request under the key in progress may mean it went out.
 */
const failedAll = (count: number, reason: string, permanent: boolean, { fatal, uncertain = false }: { fatal?: string; uncertain?: boolean } = {}): BatchOutcome => ({
  results: Array.from({ length: count }, () => ({ status: 'failed' as const, reason, permanent, uncertain })),
  ...(fatal ? { fatal } : {}),
});

export class SimulatedProvider {
  readonly accepted: AcceptedMessage[] = [];
  readonly events: ProviderEvent[] = [];
  private readonly keys = new Map<string, KeptKey>();
  private refusedUntil: number | null = null;
  private refusedReason = '';
  private nextId = 1;

  constructor(
    private readonly clock: Clock,
    /** Asked once per call: the seed's choice of fault. */
    private readonly faultFor: (key: string) => CallFault,
  ) {}

  /** The provider refuses the sender (a used-up quota, a revoked key) until `until`, or for good. */
  refuseSender(until: Date | 'forever', reason: string): void {
    this.refusedUntil = until === 'forever' ? Number.POSITIVE_INFINITY : until.getTime();
    this.refusedReason = reason;
  }

  refusesSender(): boolean {
    return this.refusedUntil !== null && this.clock.now().getTime() < this.refusedUntil;
  }

  /** Accepted messages to one address. */
  to(address: string): AcceptedMessage[] {
    return this.accepted.filter((m) => m.to === address);
  }

  acceptedUnder(key: string): AcceptedMessage[] {
    return this.accepted.filter((m) => m.key === key);
  }

  call(replica: string, messages: readonly BatchMessage[], key: string): BatchOutcome {
    const now = this.clock.now().getTime();
    const log = (answer: string) => this.events.push({ at: new Date(now).toISOString(), replica, key, messages: messages.length, answer });
    for (const [kept, entry] of this.keys) if (now - entry.firstAt >= KEY_LIFETIME_MS) this.keys.delete(kept);
    if (this.refusesSender()) {
      log('sender refused');
      return failedAll(messages.length, `invalid_api_key: ${this.refusedReason}`, true, { fatal: `invalid_api_key: ${this.refusedReason}` });
    }
    const fingerprint = fingerprintOf(messages);
    const kept = this.keys.get(key);
    if (kept && kept.fingerprint !== fingerprint) {
      log('409 other content');
      return failedAll(messages.length, 'invalid_idempotent_request: this key was used with another body in the last 24 hours', true);
    }
    const fault = this.faultFor(key);
    if (fault === 'rate-limited') return log('429'), failedAll(messages.length, 'rate_limit_exceeded: too many requests', false);
    if (fault === 'server-error') return log('500'), failedAll(messages.length, 'internal_server_error: 500', false, { uncertain: true });
    // Resend answers this only while an earlier request under the same key is still in progress, so
    // only a key it already holds can get it: on a key never used, it would be an answer no real
    // provider gives (and a batch told so would look in flight when nothing was).
    if (fault === 'concurrent-409' && kept) return log('409 concurrent'), failedAll(messages.length, 'concurrent_idempotent_requests: the same key is in flight', false, { uncertain: true });
    if (kept) {
      log('replayed');
      return fault === 'timeout' ? failedAll(messages.length, 'network: timeout', false, { uncertain: true }) : kept.answer;
    }
    const results: MessageOutcome[] = messages.map((message) => {
      const tags = message.tags ?? {};
      this.accepted.push({ to: message.to, subject: subjectOf(message), key, recap: tags.recap ?? null, kind: tags.kind ?? null, at: new Date(now) });
      return { status: 'accepted', providerId: `sim-${this.nextId++}` };
    });
    const answer: BatchOutcome = { results };
    this.keys.set(key, { fingerprint, firstAt: now, answer });
    log(fault === 'timeout' ? 'accepted, answer lost' : 'accepted');
    return fault === 'timeout' ? failedAll(messages.length, 'network: timeout', false, { uncertain: true }) : answer;
  }

  /** The mailer one replica uses; `alive` false (the replica was killed) makes every call throw. */
  mailerFor(replica: string, alive: () => boolean, from = 'Launched Weekly <news@launched.test>'): Mailer {
    const call = (messages: readonly BatchMessage[], key: string) => this.call(replica, messages, key);
    const refusal = () => (this.refusesSender() ? this.refusedReason : null);
    const singleKey = () => `single/${this.nextId}`;
    const mustLive = () => {
      if (!alive()) throw new Error(`replica ${replica} was killed`);
    };
    return {
      kind: 'resend',
      from,
      maxBatchSize: 4,
      async prepareTemplate(template: MessageTemplate): Promise<TemplateOutcome> {
        await Promise.resolve();
        mustLive();
        const refused = refusal();
        if (refused !== null) return { ok: false, reason: `invalid_api_key: ${refused}`, permanent: true, fatal: true };
        const prepared: PreparedTemplate = { ...template, id: template.alias };
        return { ok: true, template: prepared };
      },
      async sendBatch(messages: readonly BatchMessage[], options: SendOptions): Promise<BatchOutcome> {
        await Promise.resolve();
        mustLive();
        const reason = (await options.beforeAttempt?.()) ?? null;
        mustLive();
        if (reason) return failedAll(messages.length, reason, false);
        return call(messages, options.idempotencyKey);
      },
      async send(message: OutgoingMessage): Promise<MessageOutcome> {
        await Promise.resolve();
        mustLive();
        return call([message], singleKey()).results[0]!;
      },
    };
  }
}
