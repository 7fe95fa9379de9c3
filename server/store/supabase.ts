// The Supabase backend: the project's REST interface (PostgREST) through @supabase/supabase-js.
// Every request uses the service-role key, which never leaves the server: signups too, since the
// state rules (suppression, confirmation) are applied by the database's signup function, which
// the browser-facing anon key may not call, and the anon role may not insert into the table at all
// (20261123000210_revoke_anon_signup_insert.sql), so no signup skips the server's checks. The anon
// key is only checked to be one. Migrations are not run from here (REST cannot run DDL): the
// operator applies supabase/migrations, and checkReady says which are missing.
import { createClient, type PostgrestError, type SupabaseClient } from '@supabase/supabase-js';
import { digestBatchStore } from './digest-batches.ts';
import { mailboxSignupStore, type MailboxSignupStore } from './mailbox-signups.ts';
import { loadMigrations } from './migrate.ts';
import { pendingSignupStore, type PendingSignupStore } from './pending-signups.ts';
import { rateLimitCount, rateLimitCounts, type RateLimitCount, type RateLimitHit } from './rate-limit-counters.ts';
import { reportSnapshotSchema, type EmailEvent, type ReportSnapshot } from './report-types.ts';
import { normalizeEmail } from '../../content/email-address.ts';
import { ACTIVATE_FROM, countsByStatus, DETAILS_COLUMNS, singleModeResult, toDetails, type DetailsRow } from './subscriber-rows.ts';
import {
  MigrationsPendingError,
  StoreUnavailableError,
  SUBSCRIBER_STATUSES,
  type Activation,
  type BatchSettlement,
  type DigestBatchStore,
  type DigestContent,
  type DigestRunKind,
  type DigestRunResult,
  type NewBatch,
  type Delivery,
  type RemovalReason,
  type SignupDecision,
  type SignupRequest,
  type SignupResult,
  type Store,
  type Subscriber,
  type SubscriberCounts,
  type SubscriberDetails,
  type SubscriberRecord,
  type SubscriberStatus,
} from './types.ts';

export interface SupabaseStoreConfig {
  url: string;
  anonKey: string;
  serviceRoleKey: string;
}

/** A request Supabase refused for a reason that is not an outage (bad key, schema mismatch, ...). */
export class SupabaseRequestError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'SupabaseRequestError';
  }
}

const SIGNUPS = 'email_signups';
const DELIVERIES = 'digest_deliveries';
// PostgREST cuts every answer at its max-rows setting (1000 on Supabase unless changed).
const MAX_ROWS = 1000;
// Ids per `in.(...)` filter, so that the request line stays far below the 8 KB gateways accept.
const IDS_PER_REQUEST = 100;
const ROWS_PER_INSERT = 500;
const REQUEST_TIMEOUT_MS = 10_000;
// A readiness probe has to answer before the orchestrator's own timeout.
const READY_TIMEOUT_MS = 5_000;
const APPLY_HINT = "apply them with DATABASE_URL=<the project's direct connection string> npm run db:migrate";

// PostgREST's own codes for "cannot reach the database" (PGRST000-003) and SQLSTATE classes for
// connection loss, exhausted resources and an operator shutting the server down.
const UNAVAILABLE_CODE = /^(PGRST00\d|08|53|57)/;

interface Answer {
  error: PostgrestError | null;
  status: number;
}

function failure(what: string, { error, status }: Answer): Error {
  const code = error?.code ?? '';
  // A HEAD answer (counts) has no body, so the status is all there is to go on.
  const detail = `${error?.message || (status ? `HTTP ${status}` : 'no answer')}${code ? ` (${code})` : ''}`;
  // Status 0: supabase-js got no HTTP answer at all (refused, reset, DNS, timeout).
  if (status === 0 || status >= 500 || status === 429 || UNAVAILABLE_CODE.test(code)) {
    return new StoreUnavailableError(`Supabase is unavailable while ${what}: ${detail}`, { cause: error });
  }
  return new SupabaseRequestError(`Supabase refused ${what}: ${detail}`, code, status);
}

/** The id's text was not a value of the table's id type: no such subscriber. */
const isInvalidId = (answer: Answer) => answer.error?.code === '22P02';

/** The `role` a key acts as: legacy keys are JWTs with a role claim, new ones say it in a prefix. */
function supabaseKeyRole(key: string): string | null {
  if (key.startsWith('sb_publishable_')) return 'anon';
  if (key.startsWith('sb_secret_')) return 'service_role';
  const payload = key.split('.')[1];
  if (key.split('.').length !== 3 || !payload) return null;
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { role?: unknown };
    return typeof claims.role === 'string' ? claims.role : null;
  } catch {
    return null;
  }
}

function checkKeys(config: SupabaseStoreConfig) {
  const anonRole = supabaseKeyRole(config.anonKey);
  const serviceRole = supabaseKeyRole(config.serviceRoleKey);
  if (anonRole === 'service_role') {
    throw new Error(
      'SUPABASE_ANON_KEY holds a service-role (secret) key. Use the anon / publishable key from the project’s API settings there; the secret key belongs in SUPABASE_SERVICE_ROLE_KEY only.',
    );
  }
  if (serviceRole !== null && serviceRole !== 'service_role') {
    throw new Error(
      `SUPABASE_SERVICE_ROLE_KEY holds a key for the "${serviceRole}" role, which cannot read subscribers. Use the service_role / secret key from the project’s API settings.`,
    );
  }
}

interface SignupRow {
  id: string | number;
  email: string;
  status: SubscriberStatus;
  created_at: string;
}

const RECORD_COLUMNS = 'id,email,status,created_at';

const toRecord = (row: SignupRow): SubscriberRecord => ({
  id: String(row.id),
  email: row.email,
  active: row.status === 'active',
  status: row.status,
  createdAt: new Date(row.created_at),
});

/** The one definition of "receives the digest" on this backend (an index matches it). */
const ACTIVE: [column: 'status', value: SubscriberStatus] = ['status', 'active'];

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

class SupabaseStore implements Store {
  readonly backend = 'supabase' as const;
  // The digest's batches and runs are SQL functions, called over rpc (supabase/migrations/…_digest_batches.sql).
  private readonly batches: DigestBatchStore = digestBatchStore((name, args) => this.callFunction(name, args));
  private readonly pending: PendingSignupStore = pendingSignupStore((name, args) => this.callFunction(name, args));
  private readonly mailboxSignups: MailboxSignupStore = mailboxSignupStore((name, args) => this.callFunction(name, args));

  constructor(
    private readonly service: SupabaseClient,
    private readonly migrationVersions: readonly string[],
    private readonly closing: AbortController,
  ) {}

  /** `public.<name>(…)` over rpc: the store operations that are SQL functions (CallFunction). */
  private async callFunction(name: string, args: Record<string, unknown>): Promise<unknown> {
    const answer = await this.service.rpc(name, args);
    if (answer.error) throw failure(`calling ${name}`, answer);
    return answer.data as unknown;
  }

  async addSignup(email: string, source: string | null): Promise<SignupResult> {
    return singleModeResult(await this.signUp({ email, source, mode: 'single', networkHash: null, addressHashes: [] }));
  }

  async signUp(request: SignupRequest): Promise<SignupDecision> {
    // The database's signup function decides (see its migration); the service key calls it, since
    // the state rules are the server's to apply, not the browser key's.
    const called = await this.service.rpc('signup_subscriber', {
      p_email: request.email,
      p_source: request.source,
      p_mode: request.mode,
      p_network_hash: request.networkHash,
      p_address_hashes: [...request.addressHashes],
    });
    if (called.error) throw failure('adding a signup', called);
    const decision = called.data as { id: string | number; outcome: SignupDecision['outcome'] };
    return { subscriberId: String(decision.id), outcome: decision.outcome };
  }

  async activateSubscriber(id: string, how: 'confirmation' | 'resubscribe', networkHash: string | null): Promise<Activation | null> {
    const called = await this.service.rpc('activate_subscriber', {
      p_id: id,
      p_network_hash: networkHash,
      p_from: [...ACTIVATE_FROM[how]],
      p_confirmation: how === 'confirmation',
    });
    if (called.error) throw failure('activating a subscriber', called);
    return (called.data as Activation | null) ?? null;
  }

  async subscriberDetails(id: string): Promise<SubscriberDetails | null> {
    const found = await this.service.from(SIGNUPS).select(DETAILS_COLUMNS).eq('id', id).limit(1);
    if (isInvalidId(found)) return null;
    if (found.error) throw failure('reading a subscriber', found);
    const row = (found.data as unknown as DetailsRow[])[0];
    if (!row) return null;
    const deliveries = await this.service.from(DELIVERIES).select('recap_date,sent_at').eq('subscriber_id', id).order('recap_date').limit(MAX_ROWS);
    if (deliveries.error) throw failure('reading the delivery ledger', deliveries);
    return toDetails(row, deliveries.data as { recap_date: string; sent_at: string }[]);
  }

  async deleteSubscriber(id: string, addressHash: string): Promise<SubscriberStatus | null> {
    const called = await this.service.rpc('delete_subscriber', { p_id: id, p_address_hash: addressHash });
    if (called.error) throw failure('deleting a subscriber', called);
    return (called.data as SubscriberStatus | null) ?? null;
  }

  prunePending(days: number) {
    return this.pending.prunePending(days);
  }

  mailboxHashKey(candidate: string) {
    return this.mailboxSignups.mailboxHashKey(candidate);
  }

  releaseConfirmation(id: string, mailboxHash: string | null = null) {
    return this.mailboxSignups.releaseConfirmation(id, mailboxHash);
  }

  async claimWelcome(id: string): Promise<boolean> {
    const claimed = await this.service
      .from(SIGNUPS)
      .update({ welcomed_at: new Date().toISOString() })
      .eq('id', id)
      .is('welcomed_at', null)
      .eq(...ACTIVE)
      .select('id');
    if (isInvalidId(claimed)) return false;
    if (claimed.error) throw failure('recording the welcome e-mail', claimed);
    return claimed.data.length > 0;
  }

  private async findOne(column: 'id' | 'email', value: string): Promise<SubscriberRecord | null> {
    const found = await this.service.from(SIGNUPS).select(RECORD_COLUMNS).eq(column, value).limit(1);
    if (isInvalidId(found)) return null;
    if (found.error) throw failure('looking up a subscriber', found);
    const row = (found.data as SignupRow[])[0];
    return row ? toRecord(row) : null;
  }

  findSubscriber(id: string) {
    return this.findOne('id', id);
  }

  findSubscriberByEmail(email: string) {
    return this.findOne('email', normalizeEmail(email));
  }

  async removeSubscriber(id: string, reason: RemovalReason): Promise<boolean> {
    const removed = await this.service.rpc('mark_subscriber_left', { p_id: id, p_reason: reason });
    if (removed.error) throw failure('removing a subscriber', removed);
    return removed.data === true;
  }

  /**
   * Up to `limit` rows after `afterId` in id order, asking at most MAX_ROWS at a time. A page
   * shorter than asked can mean the server's row cap, not the end, so only an empty one ends it.
   */
  private async keyset<Row extends { id: string | number }>(
    afterId: string | null,
    limit: number,
    what: string,
    page: (after: string | null, count: number) => PromiseLike<Answer & { data: unknown }>,
  ): Promise<Row[]> {
    const rows: Row[] = [];
    let after = afterId;
    while (rows.length < limit) {
      const answer = await page(after, Math.min(MAX_ROWS, limit - rows.length));
      if (answer.error) throw failure(what, answer);
      const got = answer.data as Row[];
      if (got.length === 0) break;
      rows.push(...got);
      after = String(got[got.length - 1]!.id);
    }
    return rows;
  }

  async listActiveSubscribers(afterId: string | null, limit: number): Promise<Subscriber[]> {
    const rows = await this.keyset<{ id: string | number; email: string }>(afterId, limit, 'listing subscribers', (after, count) => {
      let query = this.service.from(SIGNUPS).select('id,email').eq(...ACTIVE);
      if (after !== null) query = query.gt('id', after);
      return query.order('id', { ascending: true }).limit(count);
    });
    return rows.map((row) => ({ id: String(row.id), email: row.email }));
  }

  async listAllSubscribers(afterId: string | null, limit: number): Promise<SubscriberRecord[]> {
    const rows = await this.keyset<SignupRow>(afterId, limit, 'listing subscribers', (after, count) => {
      let query = this.service.from(SIGNUPS).select(RECORD_COLUMNS);
      if (after !== null) query = query.gt('id', after);
      return query.order('id', { ascending: true }).limit(count);
    });
    return rows.map(toRecord);
  }

  async countSubscribers(): Promise<SubscriberCounts> {
    // PostgREST has no GROUP BY unless aggregates are enabled: one exact count per state.
    const counted = await Promise.all(
      SUBSCRIBER_STATUSES.map((status) => this.service.from(SIGNUPS).select('id', { count: 'exact', head: true }).eq('status', status)),
    );
    return countsByStatus(
      counted.map((answer, index) => {
        if (answer.error) throw failure('counting subscribers', answer);
        return { status: SUBSCRIBER_STATUSES[index]!, n: answer.count ?? 0 };
      }),
    );
  }

  async deliveredTo(recapDate: string, subscriberIds: readonly string[]): Promise<Set<string>> {
    const delivered = new Set<string>();
    for (const ids of chunks(subscriberIds, IDS_PER_REQUEST)) {
      const found = await this.service.from(DELIVERIES).select('subscriber_id').eq('recap_date', recapDate).in('subscriber_id', ids);
      if (found.error) throw failure('reading the delivery ledger', found);
      for (const row of found.data as { subscriber_id: string }[]) delivered.add(row.subscriber_id);
    }
    return delivered;
  }

  async recordDeliveries(recapDate: string, deliveries: readonly Delivery[]): Promise<void> {
    for (const batch of chunks(deliveries, ROWS_PER_INSERT)) {
      const rows = batch.map((d) => ({ recap_date: recapDate, subscriber_id: d.subscriberId, provider_message_id: d.providerMessageId }));
      const written = await this.service.from(DELIVERIES).upsert(rows, { onConflict: 'recap_date,subscriber_id', ignoreDuplicates: true });
      if (written.error) throw failure('recording deliveries', written);
    }
  }

  async countDeliveries(recapDate: string): Promise<number> {
    const counted = await this.service.from(DELIVERIES).select('subscriber_id', { count: 'exact', head: true }).eq('recap_date', recapDate);
    if (counted.error) throw failure('counting deliveries', counted);
    return counted.count ?? 0;
  }

  async acquireDigestLock(recapDate: string, holder: string, leaseMs: number): Promise<boolean> {
    const taken = await this.service.rpc('acquire_digest_lock', { p_recap_date: recapDate, p_holder: holder, p_lease_ms: Math.round(leaseMs) });
    if (taken.error) throw failure('taking the digest lease', taken);
    return taken.data === true;
  }

  async releaseDigestLock(recapDate: string, holder: string): Promise<void> {
    const released = await this.service.rpc('release_digest_lock', { p_recap_date: recapDate, p_holder: holder });
    if (released.error) throw failure('releasing the digest lease', released);
  }

  async hitRateLimit(key: string, points: number, windowMs: number, force: boolean): Promise<RateLimitCount> {
    const hit = await this.service.rpc('signup_rate_limit_hit', { p_key: key, p_points: points, p_window_ms: Math.round(windowMs), p_force: force });
    if (hit.error) throw failure('counting a signup attempt', hit);
    return rateLimitCount(hit.data)!;
  }

  async hitRateLimits(hits: readonly RateLimitHit[]): Promise<RateLimitCount[]> {
    const hit = await this.service.rpc('signup_rate_limit_hit_many', {
      p_keys: hits.map((h) => h.key),
      p_points: hits.map((h) => h.points),
      p_window_ms: hits.map((h) => Math.round(h.windowMs)),
    });
    if (hit.error) throw failure('counting signup attempts', hit);
    return rateLimitCounts(hit.data, hits);
  }

  async peekRateLimit(key: string): Promise<RateLimitCount | null> {
    const peeked = await this.service.rpc('signup_rate_limit_peek', { p_key: key });
    if (peeked.error) throw failure('reading a signup limit', peeked);
    return rateLimitCount(peeked.data);
  }

  async resetRateLimit(key: string): Promise<boolean> {
    const reset = await this.service.rpc('signup_rate_limit_reset', { p_key: key });
    if (reset.error) throw failure('resetting a signup limit', reset);
    return reset.data === true;
  }

  async recordEmailEvent(event: EmailEvent): Promise<void> {
    const row = {
      svix_id: event.svixId,
      event_type: event.type,
      provider_message_id: event.providerMessageId,
      subscriber_id: event.subscriberId,
      occurred_at: event.occurredAt.toISOString(),
    };
    const written = await this.service.from('email_events').upsert(row, { onConflict: 'svix_id', ignoreDuplicates: true });
    if (written.error) throw failure('recording a webhook event', written);
  }

  async reportSnapshot(weeks: number): Promise<ReportSnapshot> {
    const answer = await this.service.rpc('report_snapshot', { p_weeks: weeks });
    if (answer.error) throw failure('reading the report', answer);
    return reportSnapshotSchema.parse(answer.data);
  }

  saveDigestContent(content: DigestContent) {
    return this.batches.saveDigestContent(content);
  }
  findDigestContent(contentHash: string) {
    return this.batches.findDigestContent(contentHash);
  }
  listUndelivered(recapDate: string, afterId: string | null, limit: number) {
    return this.batches.listUndelivered(recapDate, afterId, limit);
  }
  writeDigestBatch(batch: NewBatch) {
    return this.batches.writeDigestBatch(batch);
  }
  openDigestBatches(recapDate: string | null) {
    return this.batches.openDigestBatches(recapDate);
  }
  findDigestBatch(id: string) {
    return this.batches.findDigestBatch(id);
  }
  settleDigestBatch(id: string, settlement: BatchSettlement) {
    return this.batches.settleDigestBatch(id, settlement);
  }
  markDigestBatchUnknown(id: string, reason: string) {
    return this.batches.markDigestBatchUnknown(id, reason);
  }
  digestRecipients(subscriberIds: readonly string[]) {
    return this.batches.digestRecipients(subscriberIds);
  }
  startDigestRun(kind: DigestRunKind, startedAt: Date) {
    return this.batches.startDigestRun(kind, startedAt);
  }
  finishDigestRun(id: string, result: DigestRunResult) {
    return this.batches.finishDigestRun(id, result);
  }
  recentDigestRuns(limit: number) {
    return this.batches.recentDigestRuns(limit);
  }

  async checkReady(): Promise<void> {
    const applied = await this.service
      .from('app_migrations')
      .select('version')
      .limit(MAX_ROWS)
      .retry(false)
      .abortSignal(AbortSignal.timeout(READY_TIMEOUT_MS));
    let done = new Set<string>();
    if (applied.error) {
      // No ledger table at all: nothing was ever migrated through db:migrate.
      const noTable = applied.status === 404 || applied.error.code === 'PGRST205' || applied.error.code === '42P01';
      if (!noTable) {
        const cause = failure('checking readiness', applied);
        throw cause instanceof StoreUnavailableError ? cause : new StoreUnavailableError(cause.message, { cause });
      }
    } else {
      done = new Set((applied.data as { version: string }[]).map((row) => row.version));
    }
    const missing = this.migrationVersions.filter((version) => !done.has(version));
    if (missing.length > 0) throw new MigrationsPendingError(missing, APPLY_HINT);
  }

  async close(): Promise<void> {
    // Requests still in flight (a shutdown during a slow answer) end now instead of holding it up.
    // Without a reason the abort is an AbortError, which supabase-js does not retry.
    this.closing.abort();
  }
}

export async function openSupabaseStore(config: SupabaseStoreConfig): Promise<Store> {
  checkKeys(config);
  const migrationVersions = (await loadMigrations()).map((m) => m.version);
  const closing = new AbortController();
  const fetchUntilClosed: typeof fetch = (input, init) =>
    fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, closing.signal]) : closing.signal });
  const client = (key: string) =>
    createClient(config.url, key, {
      auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
      db: { timeout: REQUEST_TIMEOUT_MS },
      global: { fetch: fetchUntilClosed },
    });
  return new SupabaseStore(client(config.serviceRoleKey), migrationVersions, closing);
}
