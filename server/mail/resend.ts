// Resend through its official SDK. The SDK never throws for an HTTP answer: it returns
// { data, error, headers }, with error = Resend's JSON body ({ statusCode, name, message }) and
// headers = every response header, so the rate-limit headers are read straight from it. A network
// failure or our timeout comes back as an error with statusCode null and no headers.
import { randomUUID } from 'node:crypto';
import { Resend, type CreateBatchEmailOptions, type ErrorResponse } from 'resend';
import { callWithPolicy, DEFAULT_DELIVERY_POLICY, RateGate, rateLimitWaitMs, type AttemptResult, type DeliveryPolicy } from './delivery-policy.ts';
import { KEY_REFUSALS, QUOTA_REFUSALS } from './sender-refusal.ts';
import type { BatchMessage, BatchOutcome, Mailer, MessageOutcome, MessageTemplate, OutgoingMessage, PreparedTemplate, SendOptions, TemplateOutcome } from './types.ts';

export const RESEND_API_URL = 'https://api.resend.com';
/** Resend's documented limit for POST /emails/batch. */
export const RESEND_BATCH_LIMIT = 100;

export interface ResendMailerOptions {
  apiKey: string;
  /** Passed to the SDK explicitly, so it never falls back to reading RESEND_BASE_URL itself. */
  baseUrl?: string;
  from: string;
  policy?: Partial<DeliveryPolicy>;
}

// Answers that mean no message from this sender will go through until a person acts.
const SENDER_REFUSED = new Set([...KEY_REFUSALS, ...QUOTA_REFUSALS]);

/** A gateway or server error may come after the request was processed; a 503 says it was not. */
const mayHaveBeenProcessed = (status: number | null) => status === null || (status >= 500 && status !== 503);

function describe(error: ErrorResponse): string {
  return `${error.name ?? 'error'}${error.statusCode ? ` (HTTP ${error.statusCode})` : ''}: ${error.message}`;
}

/** Sorts one error answer into what the retry policy does with it. */
export function classifyResendError(error: ErrorResponse, headers: Record<string, string> | null): AttemptResult<never> {
  const status = typeof error.statusCode === 'number' ? error.statusCode : null;
  const reason = describe(error);
  if (SENDER_REFUSED.has(error.name) || status === 401 || status === 403) return { kind: 'permanent', reason, fatal: true };
  if (status === 429 || error.name === 'rate_limit_exceeded') return { kind: 'rate-limited', waitMs: rateLimitWaitMs(headers), reason };
  // Another request with this key is still being processed: wait for it, then get its answer.
  if (error.name === 'concurrent_idempotent_requests') return { kind: 'rate-limited', waitMs: rateLimitWaitMs(headers), reason };
  if (status === null || status >= 500) return { kind: 'retryable', reason: status === null ? `network: ${error.message}` : reason, uncertain: mayHaveBeenProcessed(status) };
  // 400/404/409/422: the request itself is wrong; sending it again cannot help.
  return { kind: 'permanent', reason };
}

function toResend(message: BatchMessage): CreateBatchEmailOptions {
  const envelope = {
    from: message.from,
    to: [message.to],
    subject: message.subject,
    headers: message.headers,
    tags: message.tags ? Object.entries(message.tags).map(([name, value]) => ({ name, value })) : undefined,
  };
  // A templated message carries the template's id and its values; Resend renders the body.
  if ('template' in message) return { ...envelope, template: { id: message.template.id, variables: message.variables } };
  return { ...envelope, html: message.html, text: message.text };
}

/**
 * A batch refused because of its template (deleted, or not published): not the messages' fault,
 * and a rerun that registers the template again can send them, so it is not permanent.
 */
const isTemplateRefusal = (error: ErrorResponse) => /template/i.test(error.message) && (error.statusCode === 404 || error.statusCode === 422);

interface BatchReply {
  data: { id: string }[];
  errors?: { index: number; message: string }[];
}

export class ResendMailer implements Mailer {
  readonly kind = 'resend';
  readonly maxBatchSize = RESEND_BATCH_LIMIT;
  readonly from: string;
  private readonly policy: DeliveryPolicy;
  private readonly gate = new RateGate();
  private readonly apiKey: string;
  private readonly baseUrl: string;
  private resend: Resend | undefined;

  constructor(options: ResendMailerOptions) {
    this.apiKey = options.apiKey;
    this.baseUrl = (options.baseUrl ?? RESEND_API_URL).replace(/\/+$/, '');
    this.from = options.from;
    this.policy = { ...DEFAULT_DELIVERY_POLICY, ...options.policy };
  }

  /**
   * The SDK's client, made at the first call to Resend: making it loads Node's fetch (its Headers),
   * time that a server starting with the weekly schedule on would otherwise spend before its
   * first page, for a mailer that sends on Mondays.
   */
  private get client(): Resend {
    this.resend ??= new Resend(this.apiKey, { baseUrl: this.baseUrl });
    return this.resend;
  }

  /** The provider's advertised requests per window, once an answer has said it. */
  advertisedLimit(): number | null {
    return this.gate.advertisedLimit();
  }

  /**
   * Finds the template by its alias (a rerun reuses what an earlier run created), else creates it;
   * publishes it when it is a draft. Every call goes through the same retries and rate gate as
   * the batches.
   */
  async prepareTemplate(template: MessageTemplate, options: { signal?: AbortSignal } = {}): Promise<TemplateOutcome> {
    const call = <T>(request: (signal: AbortSignal) => Promise<{ data: T | null; error: ErrorResponse | null; headers: Record<string, string> | null }>, notFound?: T) =>
      callWithPolicy<T>(
        async () => {
          const response = await request(AbortSignal.timeout(this.policy.requestTimeoutMs));
          this.gate.observe(response.headers);
          if (response.error) {
            if (notFound !== undefined && response.error.statusCode === 404) return { kind: 'done', value: notFound };
            return classifyResendError(response.error, response.headers);
          }
          return { kind: 'done', value: response.data as T };
        },
        { policy: this.policy, gate: this.gate, signal: options.signal },
      );
    const found = await call<{ id: string; status: string } | null>((signal) => this.client.templates.get(template.alias, { signal }), null);
    // A refused sender says so alone; any other refusal names the step and the template.
    const refused = (step: string, failed: { reason: string; permanent: boolean; fatal?: boolean }): TemplateOutcome => ({
      ok: false,
      reason: failed.fatal ? failed.reason : `${step}${template.alias}: ${failed.reason}`,
      permanent: failed.permanent,
      fatal: failed.fatal,
    });
    if (!found.ok) return refused('template ', found);
    let id = found.value?.id;
    if (!id) {
      const created = await call<{ id: string }>((signal) =>
        Promise.resolve(this.client.templates.create(
          {
            name: template.name,
            alias: template.alias,
            subject: template.subject,
            html: template.html,
            text: template.text,
            variables: template.variables.map((key) => ({ key, type: 'string' as const })),
          },
          { signal },
        )),
      );
      if (!created.ok) return refused('creating template ', created);
      id = created.value.id;
    }
    if (found.value?.status !== 'published') {
      const published = await call<{ id: string }>((signal) => this.client.templates.publish(id!, { signal }));
      if (!published.ok) return refused('publishing template ', published);
    }
    const prepared: PreparedTemplate = { ...template, id };
    return { ok: true, template: prepared };
  }

  async sendBatch(messages: readonly BatchMessage[], { idempotencyKey, signal: waits, deadline, beforeAttempt }: SendOptions): Promise<BatchOutcome> {
    const signal = deadline && waits ? AbortSignal.any([waits, deadline]) : (deadline ?? waits);
    const results: MessageOutcome[] = [];
    const chunks = Math.ceil(messages.length / RESEND_BATCH_LIMIT);
    for (let index = 0; index < chunks; index++) {
      const chunk = messages.slice(index * RESEND_BATCH_LIMIT, (index + 1) * RESEND_BATCH_LIMIT);
      const key = chunks === 1 ? idempotencyKey : `${idempotencyKey}/${index + 1}`;
      const outcome = await this.sendChunk(chunk, key, { signal, deadline }, beforeAttempt);
      results.push(...outcome.results);
      if (outcome.fatal) {
        const rest = messages.length - results.length;
        results.push(...Array.from({ length: rest }, () => ({ status: 'failed' as const, reason: outcome.fatal!, permanent: true })));
        return { results, fatal: outcome.fatal };
      }
    }
    return { results };
  }

  private async sendChunk(
    chunk: readonly BatchMessage[],
    idempotencyKey: string,
    { signal, deadline }: Pick<SendOptions, 'signal' | 'deadline'>,
    beforeAttempt?: SendOptions['beforeAttempt'],
  ): Promise<BatchOutcome> {
    const payload = chunk.map(toResend);
    const timeout = () => (deadline ? AbortSignal.any([deadline, AbortSignal.timeout(this.policy.requestTimeoutMs)]) : AbortSignal.timeout(this.policy.requestTimeoutMs));
    const call = await callWithPolicy<BatchReply>(
      async () => {
        // Permissive: a bad address fails alone instead of sinking the other 99.
        const response = await this.client.batch.send(payload, {
          idempotencyKey,
          batchValidation: 'permissive',
          signal: timeout(),
        });
        this.gate.observe(response.headers);
        if (response.error && isTemplateRefusal(response.error)) return { kind: 'later-run', reason: `template_unavailable: ${describe(response.error)}` };
        if (response.error) return classifyResendError(response.error, response.headers);
        return { kind: 'done', value: response.data as BatchReply };
      },
      { policy: this.policy, gate: this.gate, signal, beforeAttempt },
    );
    if (!call.ok) {
      const failed: MessageOutcome = { status: 'failed', reason: call.reason, permanent: call.permanent, uncertain: call.uncertain };
      return { results: chunk.map(() => failed), fatal: call.fatal ? call.reason : undefined };
    }
    const refused = new Map((call.value.errors ?? []).map((error) => [error.index, error.message]));
    const ids = call.value.data ?? [];
    // Resend lists the ids of the accepted messages in request order, skipping the refused ones.
    const idsMatch = ids.length === chunk.length - refused.size;
    let next = 0;
    return {
      results: chunk.map((_, index): MessageOutcome => {
        const message = refused.get(index);
        if (message !== undefined) return { status: 'failed', reason: `validation_error: ${message}`, permanent: true };
        const id = idsMatch ? (ids[next++]?.id ?? null) : null;
        return { status: 'accepted', providerId: id };
      }),
    };
  }

  async send(message: OutgoingMessage, options: { signal?: AbortSignal } = {}): Promise<MessageOutcome> {
    const idempotencyKey = `single/${randomUUID()}`;
    const call = await callWithPolicy<{ id: string }>(
      async () => {
        const response = await this.client.emails.send(toResend(message), { idempotencyKey, signal: AbortSignal.timeout(this.policy.requestTimeoutMs) });
        this.gate.observe(response.headers);
        if (response.error) return classifyResendError(response.error, response.headers);
        return { kind: 'done', value: response.data };
      },
      { policy: this.policy, gate: this.gate, signal: options.signal },
    );
    return call.ok ? { status: 'accepted', providerId: call.value.id } : { status: 'failed', reason: call.reason, permanent: call.permanent };
  }
}
