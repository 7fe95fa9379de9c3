// A local stand-in for Resend's HTTP API (POST /emails, POST /emails/batch; templates: POST
// /templates, GET /templates/:id-or-alias, POST /templates/:id-or-alias/publish), answering in Resend's
// documented format: JSON errors { statusCode, name, message }, 422 validation_error, 429
// rate_limit_exceeded with retry-after and ratelimit-* headers, 409 for an idempotency key reused
// with another payload, and idempotency keys honoured for 24 hours (same key and payload: the
// first answer again, nothing sent twice). It records every message it accepted, per recipient.
//
// Fault knobs: an outage (503 to every request until switched off), a storm of N 429s, a burst of N 500s, hung requests (never answered), an advertised
// and enforced requests-per-second limit, and a hook awaited when a batch has been accepted but
// before its answer goes out (to kill a client in exactly that window).
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeMessage {
  id: string;
  from: string;
  to: string[];
  subject: string;
  html?: string;
  text?: string;
  headers: Record<string, string>;
  tags: { name: string; value: string }[];
  idempotencyKey: string | null;
}

export interface FakeRequest {
  path: string;
  idempotencyKey: string | null;
  status: number | 'hung';
  /** Why the answer was what it was: 'accepted', 'replayed', 'storm', 'rate-limit', 'server-error', … */
  kind: string;
  at: number;
}

const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
const ADDRESS = /^[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+$/;
const SENDER = /^(?:[^<>]*<[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+\.[^\s@<>]+)$/;

interface CachedAnswer {
  payloadHash: string;
  status: number;
  body: unknown;
  at: number;
}

/** An answer that refuses a request: Resend's error body, its headers, and why (the request log's kind). */
interface Refusal {
  status: number;
  kind: string;
  name: string;
  message: string;
  headers: Record<string, string>;
}

type RequestLog = (status: number | 'hung', kind: string) => void;

/** The request's bytes, or null when the client went away before sending them all. */
async function requestBytes(req: IncomingMessage): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of req) chunks.push(chunk as Buffer);
  } catch {
    return null;
  }
  return Buffer.concat(chunks);
}

interface EmailInput {
  template?: unknown;
  from?: unknown;
  to?: unknown;
  subject?: unknown;
  html?: unknown;
  text?: unknown;
  headers?: unknown;
  tags?: unknown;
}

export interface FakeTemplate {
  id: string;
  alias: string | null;
  name: string;
  subject: string | null;
  html: string;
  text: string | null;
  variables: { key: string; type: string; fallback_value: string | number | null; created_at: string; updated_at: string }[];
  status: 'draft' | 'published';
  created_at: string;
  published_at: string | null;
}

// Resend's template syntax: {{{NAME}}}, the value as given.
const PLACEHOLDER = /\{\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}\}/g;
const RESERVED_VARIABLES = new Set(['FIRST_NAME', 'LAST_NAME', 'EMAIL', 'UNSUBSCRIBE_URL', 'contact', 'this']);

export class FakeResend {
  url = '';
  readonly messages: FakeMessage[] = [];
  /** Templates by id, as created through POST /templates. */
  readonly templates = new Map<string, FakeTemplate>();
  readonly requests: FakeRequest[] = [];
  /** Addresses the provider refuses (validation_error), as it would an undeliverable format. */
  readonly refusedAddresses = new Set<string>();
  /** While true, every request answers 503 in Resend's error format and nothing is accepted. */
  outage = false;
  /**
   * While set, every e-mail request is refused as Resend refuses the sender itself: 429
   * daily_quota_exceeded or monthly_quota_exceeded, or 403 invalid_api_key; nothing is accepted.
   */
  senderRefusal: 'daily_quota_exceeded' | 'monthly_quota_exceeded' | 'invalid_api_key' | null = null;
  /** The next N e-mail requests answer 429 rate_limit_exceeded with this retry-after. */
  rateLimitStorm = 0;
  stormRetryAfterSeconds = 1;
  /** The next N e-mail requests answer 500 internal_server_error. */
  serverErrors = 0;
  /** The next N e-mail requests are never answered; with hangAfterAccept they are accepted first. */
  hang = 0;
  hangAfterAccept = true;
  /** Advertised (ratelimit-* headers) and enforced (429) requests per one-second window. */
  requestsPerSecond: number | null = null;
  /** False keeps only each message's envelope (id, to, tags): a 100k-recipient benchmark would hold gigabytes of HTML. */
  keepBodies = true;
  /** Awaited after a batch is accepted and recorded, before the answer is written. */
  onBatchAccepted: ((acceptedBatches: number) => Promise<void> | void) | null = null;
  acceptedBatches = 0;
  /** The provider's clock: a test moves it forward to be "25 hours later" without waiting. */
  clock: () => number = Date.now;

  private server: Server | null = null;
  private readonly idempotency = new Map<string, CachedAnswer>();
  private readonly inFlightKeys = new Set<string>();
  private readonly hung = new Set<ServerResponse>();
  private windowStart = 0;
  private windowCount = 0;

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const res of this.hung) res.destroy();
    await new Promise<void>((resolve) => {
      this.server?.close(() => resolve());
      this.server?.closeAllConnections();
    });
  }

  /** Messages accepted for one recipient, optionally only those tagged with a recap date. */
  deliveredTo(email: string, recap?: string): FakeMessage[] {
    return this.messages.filter((m) => m.to.includes(email) && (recap === undefined || m.tags.some((t) => t.name === 'recap' && t.value === recap)));
  }

  forRecap(recap: string): FakeMessage[] {
    return this.messages.filter((m) => m.tags.some((t) => t.name === 'recap' && t.value === recap));
  }

  /** 429s the enforced limit gave (the storm knob's are counted apart). */
  enforcedRateLimits(): number {
    return this.requests.filter((r) => r.kind === 'rate-limit').length;
  }

  private rateHeaders(now: number): Record<string, string> {
    if (this.requestsPerSecond === null) return {};
    const resetSeconds = Math.max(1, Math.ceil((this.windowStart + 1000 - now) / 1000));
    return {
      'ratelimit-limit': String(this.requestsPerSecond),
      'ratelimit-remaining': String(Math.max(0, this.requestsPerSecond - this.windowCount)),
      'ratelimit-reset': String(resetSeconds),
    };
  }

  private answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>) {
    res.on('error', () => {});
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  private error(res: ServerResponse, status: number, name: string, message: string, headers: Record<string, string>) {
    this.answer(res, status, { statusCode: status, name, message }, headers);
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const rawBytes = await requestBytes(req);
    // The client died mid-request (a SIGKILLed sender): nothing arrived, nothing to answer.
    if (rawBytes === null) return;
    const now = this.clock();
    const path = new URL(req.url ?? '/', 'http://fake').pathname;
    const key = (req.headers['idempotency-key'] as string | undefined) ?? null;
    const log: RequestLog = (status, kind) => this.requests.push({ path, idempotencyKey: key, status, kind, at: now });
    const refuse = (refusal: Refusal) => {
      log(refusal.status, refusal.kind);
      this.error(res, refusal.status, refusal.name, refusal.message, refusal.headers);
    };

    const templatePath = /^\/templates(?:\/([^/]+)(\/publish)?)?$/.exec(path);
    const gated = this.gate(req, path, templatePath !== null, now);
    if (gated) return refuse(gated);
    const rate = this.rateHeaders(now);
    // The storm, server-error and hang knobs count e-mail requests only; an outage stops everything.
    if (templatePath) return this.handleTemplate(req.method ?? 'GET', templatePath[1], Boolean(templatePath[2]), rawBytes.toString('utf8'), res, rate, log);
    const fault = this.injectedFault(rate);
    if (fault) return refuse(fault);
    const hangThis = this.hang > 0;
    if (hangThis) {
      this.hang--;
      if (!this.hangAfterAccept) {
        log('hung', 'hung');
        this.hung.add(res);
        return;
      }
    }

    let body: unknown;
    try {
      body = JSON.parse(rawBytes.toString('utf8'));
    } catch {
      return refuse({ status: 422, name: 'validation_error', message: 'Invalid JSON body.', headers: rate, kind: 'invalid-json' });
    }
    // The bytes as received: hashing the decoded string would encode 2.7 MB a batch over again.
    const payloadHash = createHash('sha256').update(path).update(rawBytes).digest('hex');
    const earlier = key === null ? null : this.earlierAnswer(key, payloadHash, now, rate);
    if (earlier && 'kind' in earlier) return refuse(earlier);
    if (earlier) {
      log(earlier.status, 'replayed');
      return this.answer(res, earlier.status, earlier.body, rate);
    }
    const batch = path === '/emails/batch';
    const permissive = batch && req.headers['x-batch-validation'] === 'permissive';
    const checked = this.checkEmails(batch, body, permissive, rate);
    if ('kind' in checked) return refuse(checked);

    if (key !== null) this.inFlightKeys.add(key);
    const answerBody = this.accept(checked.emails, checked.problems, key, batch, permissive);
    if (key !== null) {
      this.idempotency.set(key, { payloadHash, status: 200, body: answerBody, at: now });
      this.inFlightKeys.delete(key);
    }
    if (batch) {
      this.acceptedBatches++;
      await this.onBatchAccepted?.(this.acceptedBatches);
    }
    if (hangThis) {
      log('hung', 'accepted-then-hung');
      this.hung.add(res);
      return;
    }
    log(200, 'accepted');
    this.answer(res, 200, answerBody, rate);
  }

  /** What refuses a request before its body is read: an outage, a wrong path, the key, a refused sender, the rate. */
  private gate(req: IncomingMessage, path: string, template: boolean, now: number): Refusal | null {
    const refusal = (status: number, kind: string, name: string, message: string, headers: Record<string, string> = {}) => ({ status, kind, name, message, headers });
    if (this.outage) return refusal(503, 'outage', 'service_unavailable', 'The service is temporarily unavailable. Please try again later.');
    if (!template && (req.method !== 'POST' || (path !== '/emails' && path !== '/emails/batch'))) {
      return refusal(405, 'not-found', 'method_not_allowed', 'Method is not allowed for the requested path.');
    }
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ')) {
      return refusal(401, 'auth', 'missing_api_key', 'Missing API key in the authorization header. Include the following header in the request: Authorization: Bearer YOUR_API_KEY');
    }
    if (!auth.slice(7).startsWith('re_')) return refusal(403, 'auth', 'invalid_api_key', 'API key is invalid');
    if (this.senderRefusal !== null && !template) {
      if (this.senderRefusal === 'invalid_api_key') return refusal(403, 'sender-refused', 'invalid_api_key', 'API key is invalid');
      const which = this.senderRefusal === 'daily_quota_exceeded' ? 'daily' : 'monthly';
      return refusal(429, 'sender-refused', this.senderRefusal, `You have reached your ${which} email sending quota.`);
    }
    // The window: every request counts, the enforced limit answers 429 past it.
    if (this.requestsPerSecond === null) return null;
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.windowCount = 0;
    }
    this.windowCount++;
    if (this.windowCount <= this.requestsPerSecond) return null;
    const headers = { ...this.rateHeaders(now), 'retry-after': this.rateHeaders(now)['ratelimit-reset']! };
    return refusal(429, 'rate-limit', 'rate_limit_exceeded', `Too many requests. You can only make ${this.requestsPerSecond} requests per second.`, headers);
  }

  /** A 429 of the storm or a 500 of the burst, while either lasts. */
  private injectedFault(rate: Record<string, string>): Refusal | null {
    if (this.rateLimitStorm > 0) {
      this.rateLimitStorm--;
      const headers = { ...rate, 'retry-after': String(this.stormRetryAfterSeconds) };
      return { status: 429, kind: 'storm', name: 'rate_limit_exceeded', message: 'Too many requests. Please limit the number of requests per second.', headers };
    }
    if (this.serverErrors > 0) {
      this.serverErrors--;
      return { status: 500, kind: 'server-error', name: 'internal_server_error', message: 'An unexpected error occurred.', headers: rate };
    }
    return null;
  }

  /** The answer a key already has within its 24 hours, or its 409 (another payload, or still in progress). */
  private earlierAnswer(key: string, payloadHash: string, now: number, rate: Record<string, string>): CachedAnswer | Refusal | null {
    const cached = this.idempotency.get(key);
    if (cached && now - cached.at < IDEMPOTENCY_TTL_MS) {
      if (cached.payloadHash === payloadHash) return cached;
      const message = 'This idempotency key has been used on a request with a different payload. Retrying this request is not allowed.';
      return { status: 409, kind: 'idempotency-conflict', name: 'invalid_idempotent_request', message, headers: rate };
    }
    if (!this.inFlightKeys.has(key)) return null;
    const message = 'Same idempotency key used while original request is still in progress.';
    return { status: 409, kind: 'idempotency-concurrent', name: 'concurrent_idempotent_requests', message, headers: { ...rate, 'retry-after': '1' } };
  }

  /** The request's e-mails and each one's problem, or what refuses them all. */
  private checkEmails(batch: boolean, body: unknown, permissive: boolean, rate: Record<string, string>): { emails: EmailInput[]; problems: (string | null)[] } | Refusal {
    const invalid = (message: string, status = 422, name = 'validation_error', kind = 'validation') => ({ status, kind, name, message, headers: rate });
    const emails: EmailInput[] = batch ? (Array.isArray(body) ? (body as EmailInput[]) : []) : [body as EmailInput];
    if (batch && (!Array.isArray(body) || emails.length === 0 || emails.length > 100)) return invalid('The `emails` field must be an array of 1 to 100 emails.');
    const templateProblem = emails.map((email) => this.templateProblem(email)).find((p) => p !== null);
    if (templateProblem) return invalid(templateProblem.message, templateProblem.status, templateProblem.name, 'template');
    const problems = emails.map((email) => this.problemWith(email));
    const firstProblem = problems.find((p) => p !== null);
    if (firstProblem && !permissive) return invalid(firstProblem);
    return { emails, problems };
  }

  /** Records each valid e-mail as sent; the answer's body (with the refused ones, in permissive mode). */
  private accept(emails: readonly EmailInput[], problems: readonly (string | null)[], key: string | null, batch: boolean, permissive: boolean): unknown {
    const accepted: { id: string }[] = [];
    const errors: { index: number; message: string }[] = [];
    emails.forEach((email, index) => {
      const problem = problems[index];
      if (problem) {
        errors.push({ index, message: problem });
        return;
      }
      const id = randomUUID();
      accepted.push({ id });
      const body = this.keepBodies ? this.bodyOf(email) : { subject: String(email.subject ?? '') };
      this.messages.push({
        id,
        from: String(email.from),
        to: Array.isArray(email.to) ? email.to.map(String) : [String(email.to)],
        subject: body.subject,
        html: body.html,
        text: body.text,
        headers: this.keepBodies ? ((email.headers as Record<string, string> | undefined) ?? {}) : {},
        tags: Array.isArray(email.tags) ? (email.tags as { name: string; value: string }[]) : [],
        idempotencyKey: key,
      });
    });
    return batch ? (permissive ? { data: accepted, errors } : { data: accepted }) : accepted[0];
  }

  private problemWith(email: EmailInput): string | null {
    if (typeof email.from !== 'string' || !SENDER.test(email.from)) return 'Invalid `from` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.';
    const to = Array.isArray(email.to) ? email.to : [email.to];
    if (to.length === 0 || to.length > 50) return 'The `to` field must have between 1 and 50 addresses.';
    for (const address of to) {
      if (typeof address !== 'string' || !ADDRESS.test(address) || this.refusedAddresses.has(address)) {
        return 'Invalid `to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.';
      }
    }
    if (email.template !== undefined) return null;
    if (typeof email.subject !== 'string' || email.subject === '') return 'Missing `subject` field.';
    if (typeof email.html !== 'string' && typeof email.text !== 'string') return 'Missing `html` or `text` field.';
    return null;
  }

  /** The message as its recipient gets it: a templated one rendered with its variables. */
  private bodyOf(email: EmailInput): { subject: string; html?: string; text?: string } {
    const ref = email.template as { id: string; variables?: Record<string, string | number> } | undefined;
    if (!ref) return { subject: String(email.subject), html: typeof email.html === 'string' ? email.html : undefined, text: typeof email.text === 'string' ? email.text : undefined };
    const template = this.findTemplate(ref.id)!;
    const values = new Map(template.variables.map((v) => [v.key, ref.variables?.[v.key] ?? v.fallback_value]));
    const fill = (text: string) => text.replace(PLACEHOLDER, (_, name: string) => String(values.get(name) ?? ''));
    return { subject: fill(typeof email.subject === 'string' ? email.subject : (template.subject ?? '')), html: fill(template.html), text: template.text === null ? undefined : fill(template.text) };
  }

  findTemplate(idOrAlias: string): FakeTemplate | undefined {
    return this.templates.get(idOrAlias) ?? [...this.templates.values()].find((t) => t.alias === idOrAlias);
  }

  /** A batch naming a template that does not exist or is not published fails as a whole. */
  private templateProblem(email: EmailInput): { status: number; name: string; message: string } | null {
    if (email.template === undefined) return null;
    const ref = email.template as { id?: unknown; variables?: unknown };
    if (typeof ref !== 'object' || ref === null || typeof ref.id !== 'string') return { status: 422, name: 'validation_error', message: 'The `template.id` field must be a string.' };
    if (email.html !== undefined || email.text !== undefined) return { status: 422, name: 'validation_error', message: 'The `html` and `text` fields cannot be used together with `template`.' };
    const template = this.findTemplate(ref.id);
    if (!template) return { status: 404, name: 'not_found', message: 'Template not found' };
    if (template.status !== 'published') return { status: 422, name: 'validation_error', message: `Template ${ref.id} is not published. Publish the template before sending.` };
    const values = (ref.variables ?? {}) as Record<string, unknown>;
    const missing = template.variables.find((v) => v.fallback_value === null && (values[v.key] === undefined || values[v.key] === null));
    if (missing) return { status: 422, name: 'validation_error', message: `Missing required variable '${missing.key}'.` };
    return null;
  }

  private handleTemplate(method: string, idOrAlias: string | undefined, publish: boolean, raw: string, res: ServerResponse, rate: Record<string, string>, log: (status: number, kind: string) => void) {
    if (idOrAlias === undefined && method === 'POST') {
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        log(422, 'invalid-json');
        return this.error(res, 422, 'validation_error', 'Invalid JSON body.', rate);
      }
      return this.createTemplate(body as Record<string, unknown>, res, rate, log);
    }
    const template = idOrAlias === undefined ? undefined : this.findTemplate(decodeURIComponent(idOrAlias));
    if ((method === 'GET' && !publish) || (method === 'POST' && publish)) {
      if (!template) {
        log(404, 'template-not-found');
        return this.error(res, 404, 'not_found', 'Template not found', rate);
      }
      if (publish) {
        template.status = 'published';
        template.published_at = new Date(this.clock()).toISOString();
        log(200, 'template-published');
        return this.answer(res, 200, { id: template.id, object: 'template' }, rate);
      }
      log(200, 'template');
      return this.answer(res, 200, { object: 'template', ...template, updated_at: template.created_at, from: null, reply_to: null, has_unpublished_versions: template.status === 'draft', current_version_id: template.id }, rate);
    }
    log(405, 'not-found');
    return this.error(res, 405, 'method_not_allowed', 'Method is not allowed for the requested path.', rate);
  }

  private createTemplate(input: Record<string, unknown>, res: ServerResponse, rate: Record<string, string>, log: (status: number, kind: string) => void) {
    const refuse = (message: string) => {
      log(422, 'template-validation');
      return this.error(res, 422, 'validation_error', message, rate);
    };
    if (typeof input?.name !== 'string' || input.name === '') return refuse('Missing `name` field.');
    if (typeof input.html !== 'string' || input.html === '') return refuse('Missing `html` field.');
    const variables = Array.isArray(input.variables) ? (input.variables as FakeTemplate['variables']) : [];
    if (variables.length > 50) return refuse('A template can have at most 50 variables.');
    const reserved = variables.find((v) => RESERVED_VARIABLES.has(v.key));
    if (reserved) return refuse(`The variable name '${reserved.key}' is reserved and cannot be used.`);
    const declared = new Set(variables.map((v) => v.key));
    for (const part of [input.subject, input.html, input.text]) {
      if (typeof part !== 'string') continue;
      for (const match of part.matchAll(PLACEHOLDER)) {
        if (!declared.has(match[1]!)) return refuse(`Variable '${match[1]}' is used in the template but not defined in the variables list`);
      }
    }
    const alias = typeof input.alias === 'string' ? input.alias : null;
    if (alias && this.findTemplate(alias)) return refuse(`A template with the alias '${alias}' already exists.`);
    const createdAt = new Date(this.clock()).toISOString();
    const template: FakeTemplate = {
      id: randomUUID(),
      alias,
      name: input.name,
      subject: typeof input.subject === 'string' ? input.subject : null,
      html: input.html,
      text: typeof input.text === 'string' ? input.text : null,
      variables: variables.map((v) => ({ key: v.key, type: v.type, fallback_value: v.fallback_value ?? null, created_at: createdAt, updated_at: createdAt })),
      status: 'draft',
      created_at: createdAt,
      published_at: null,
    };
    this.templates.set(template.id, template);
    log(201, 'template-created');
    return this.answer(res, 201, { id: template.id, object: 'template' }, rate);
  }
}

export async function startFakeResend(): Promise<FakeResend> {
  return new FakeResend().start();
}
