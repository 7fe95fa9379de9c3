// The one mail interface the digest job depends on. Two backends implement it: Resend (the real
// provider) and the embedded outbox (one .eml file per message in DATA_DIR/outbox).

interface MessageEnvelope {
  to: string;
  from: string;
  subject: string;
  /** Extra headers, e.g. List-Unsubscribe and List-Unsubscribe-Post. */
  headers: Record<string, string>;
  /** Provider-side labels (Resend tags: ASCII letters, digits, `_` and `-` only). */
  tags?: Record<string, string>;
}

/** A message with its whole body. */
export interface OutgoingMessage extends MessageEnvelope {
  html: string;
  text: string;
}

/**
 * A body shared by many messages, each filling its placeholders: `{{{NAME}}}` in the HTML and
 * text parts (Resend's syntax), replaced by the value as given, nothing escaped.
 */
export interface MessageTemplate {
  /** Stable for the same content: a rerun finds the template an earlier run registered. */
  alias: string;
  /** What a person sees in the provider's dashboard. */
  name: string;
  subject: string;
  html: string;
  text: string;
  /** Every placeholder the parts use. */
  variables: readonly string[];
}

/** A template the mailer has registered (Resend: created and published) and can send. */
export interface PreparedTemplate extends MessageTemplate {
  /** The provider's id (Resend) or the alias (outbox). */
  id: string;
}

/** A message whose body is a prepared template with these values. */
export interface TemplatedMessage extends MessageEnvelope {
  template: PreparedTemplate;
  variables: Record<string, string>;
}

export type BatchMessage = OutgoingMessage | TemplatedMessage;

export type TemplateOutcome = { ok: true; template: PreparedTemplate } | { ok: false; reason: string; permanent: boolean; fatal?: boolean };

export type MessageOutcome =
  | { status: 'accepted'; providerId: string | null }
  | {
      status: 'failed';
      /** Short, stable words for the summary, e.g. "validation_error: Invalid `to` field". */
      reason: string;
      /**
       * True when sending the same message again cannot succeed (the provider refused it);
       * false when it may (the provider was unavailable or rate limited beyond the retry budget).
       */
      permanent: boolean;
      /** True when the provider may have accepted it all the same (no answer came): only a repeat under the same key is safe. */
      uncertain?: boolean;
    };

export interface BatchOutcome {
  /** One per message, in the order given. */
  results: MessageOutcome[];
  /**
   * Set when the provider refuses the sender itself (bad key, quota used up): every further
   * batch would fail the same way, so the caller should stop.
   */
  fatal?: string;
}

export interface SendOptions {
  /**
   * The same key with the same messages is delivered once, however often it is retried (Resend
   * keeps keys for 24 hours; the outbox for as long as its files).
   */
  idempotencyKey: string;
  /** Aborts waits between attempts. A request already on the wire is left to finish. */
  signal?: AbortSignal;
  /**
   * A hard end for the whole call, waits and requests on the wire alike (the outbox: a claim that
   * runs out). An abandoned request is safe to repeat under the same idempotency key.
   */
  deadline?: AbortSignal;
  /**
   * Asked right before every attempt (the first and each retry): a reason stops the call there,
   * with nothing more sent, and every message is reported failed (not permanent) for that reason.
   */
  beforeAttempt?: () => Promise<string | null>;
}

export interface Mailer {
  readonly kind: 'resend' | 'outbox';
  /** The sender every message goes out as (MAIL_FROM). */
  readonly from: string;
  /** The most messages one provider call takes; larger batches are split. */
  readonly maxBatchSize: number;
  /**
   * Registers a shared body once (Resend: looked up by alias, else created; published), so each
   * message of a batch carries only its values.
   */
  prepareTemplate(template: MessageTemplate, options?: { signal?: AbortSignal }): Promise<TemplateOutcome>;
  sendBatch(messages: readonly BatchMessage[], options: SendOptions): Promise<BatchOutcome>;
  /** One message, e.g. a test to the operator's own address. */
  send(message: OutgoingMessage, options?: { signal?: AbortSignal }): Promise<MessageOutcome>;
}
