// The Store over SQL, shared by the embedded PGlite and a real Postgres: the same statements run
// on both, so the contract tests prove one implementation twice.
import { normalizeEmail } from '../../content/email-address.ts';
import { digestBatchStore } from './digest-batches.ts';
import { mailboxSignupStore, type MailboxSignupStore } from './mailbox-signups.ts';
import { pendingMigrations } from './migrate.ts';
import { pendingSignupStore, type PendingSignupStore } from './pending-signups.ts';
import { rateLimitCount, rateLimitCounts, type RateLimitCount, type RateLimitHit } from './rate-limit-counters.ts';
import { reportSnapshotSchema, type EmailEvent, type ReportSnapshot } from './report-types.ts';
import { SignupBatcher, type SignupRow } from './signup-batcher.ts';
import { sqlState, type SqlClient } from './sql-client.ts';
import {
  MigrationsPendingError,
  StoreUnavailableError,
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
import { ACTIVATE_FROM, countsByStatus, singleModeResult, toDetails, type DetailsRow } from './subscriber-rows.ts';

interface SubscriberRow {
  id: string;
  email: string;
  status: SubscriberStatus;
  created_at: Date | string;
}

const toRecord = (row: SubscriberRow): SubscriberRecord => ({
  id: row.id,
  email: row.email,
  active: row.status === 'active',
  status: row.status,
  createdAt: new Date(row.created_at),
});

/** The one definition of "receives the digest" on the SQL backends (an index matches it). */
const ACTIVE = `status = 'active'`;
const RECORD_COLUMNS = 'id::text as id, email, status, created_at';

// SQLSTATE classes that mean "the database is not there or not itself", not "your query is wrong".
const UNAVAILABLE_CLASSES = ['08', '53', '57', '58'];
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);

/** Errors that say the store is unreachable become StoreUnavailableError; the rest pass through. */
export function classifyError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  // Node's socket errors also carry a `code` (ECONNREFUSED); only five-character codes are
  // SQLSTATEs, and EPIPE, five capitals, is Node's.
  const code = sqlState(error);
  const networkCode = code !== undefined && NETWORK_CODES.has(code);
  const state = code && !networkCode && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
  // The code, not only the message: when a host name resolves to several addresses (localhost:
  // ::1 and 127.0.0.1) and all refuse, Node reports an AggregateError with an empty message.
  // pg-pool's wait for a free connection ends in "timeout exceeded when trying to connect".
  const isNetwork =
    networkCode ||
    (error instanceof Error && /ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|ENOTFOUND|terminat|Connection|closed|timeout/i.test(error.message));
  if ((state && UNAVAILABLE_CLASSES.includes(state.slice(0, 2))) || (!state && isNetwork)) {
    return new StoreUnavailableError('The database is unavailable', { cause: error });
  }
  return error;
}

/**
 * Signup statements in flight at once (signup-batcher.ts). One: while it runs, every signup that
 * arrives joins the next statement. Measured with `npm run bench -- signup` (PostgreSQL, 50
 * connections): 1 in flight 10,700–14,300 signups/s, 2 → 9,800–10,600, 4 → 8,800, 10 (the
 * pool) → 9,000, one statement per signup → 5,100. The embedded database runs one statement at a
 * time anyway.
 */
const SIGNUP_STATEMENTS_IN_FLIGHT = 1;

export class SqlStore implements Store {
  private readonly signups: SignupBatcher;
  private readonly batches: DigestBatchStore = digestBatchStore((name, args) => this.callFunction(name, args));
  private readonly pending: PendingSignupStore = pendingSignupStore((name, args) => this.callFunction(name, args));
  private readonly mailboxSignups: MailboxSignupStore = mailboxSignupStore((name, args) => this.callFunction(name, args));

  constructor(
    readonly backend: 'pglite' | 'postgres',
    private readonly client: SqlClient,
  ) {
    this.signups = new SignupBatcher(
      {
        one: (row) => this.insertSignup(row),
        decide: (row) => this.callSignup(row),
        many: (rows) => this.insertSignups(rows),
        isUnavailable: (error) => error instanceof StoreUnavailableError,
      },
      SIGNUP_STATEMENTS_IN_FLIGHT,
    );
  }

  private async run<Row>(sql: string, params: unknown[] = []) {
    try {
      return await this.client.query<Row>(sql, params);
    } catch (error) {
      throw classifyError(error);
    }
  }

  async addSignup(email: string, source: string | null): Promise<SignupResult> {
    return singleModeResult(await this.signUp({ email, source, mode: 'single', networkHash: null, addressHashes: [] }));
  }

  signUp(request: SignupRequest): Promise<SignupDecision> {
    // Double mode (and the rarer cases of single mode) need the function's decisions; single
    // mode's common case, a new address, is group-committed.
    return request.mode === 'single' ? this.signups.add(request) : this.callSignup(request);
  }

  /** One signup, decided by the database's signup function (see its migration). */
  private async callSignup(request: SignupRequest): Promise<SignupDecision> {
    const result = await this.run<{ decision: { id: string; outcome: SignupDecision['outcome'] } }>(
      'select public.signup_subscriber($1, $2, $3, $4, $5::text[]) as decision',
      [request.email, request.source, request.mode, request.networkHash, [...request.addressHashes]],
    );
    const { id, outcome } = result.rows[0]!.decision;
    return { subscriberId: String(id), outcome };
  }

  /**
   * A lone single-mode signup: the same plain insert as a group (the common case, a new address,
   * costs one cheap statement); only a row it does not activate goes to the signup function.
   */
  private async insertSignup(row: SignupRow): Promise<SignupDecision> {
    const id = (await this.insertSignups([row])).get(row.email);
    return id === undefined ? this.callSignup(row) : { outcome: 'subscribed', subscriberId: id };
  }

  /** Single-mode rows with distinct addresses in one statement (mailbox-signups.ts). */
  private insertSignups(rows: readonly SignupRow[]): Promise<Map<string, string>> {
    return this.mailboxSignups.insertActive(rows);
  }

  mailboxHashKey(candidate: string) {
    return this.mailboxSignups.mailboxHashKey(candidate);
  }

  async activateSubscriber(id: string, how: 'confirmation' | 'resubscribe', networkHash: string | null): Promise<Activation | null> {
    const result = await this.run<{ activation: Activation | null }>(
      'select public.activate_subscriber($1, $2, $3::text[], $4) as activation',
      [id, networkHash, ACTIVATE_FROM[how], how === 'confirmation'],
    );
    return result.rows[0]?.activation ?? null;
  }

  async subscriberDetails(id: string): Promise<SubscriberDetails | null> {
    const found = await this.run<DetailsRow>(
      `select id::text as id, email, status, created_at, status_changed_at, source, resubscribed_at, confirmed_at,
              unsubscribed_at, signup_ip_hash, confirm_ip_hash, welcomed_at
       from public.email_signups where id::text = $1`,
      [id],
    );
    const row = found.rows[0];
    if (!row) return null;
    const deliveries = await this.run<{ recap_date: string; sent_at: Date | string }>(
      `select to_char(recap_date, 'YYYY-MM-DD') as recap_date, sent_at from public.digest_deliveries
       where subscriber_id = $1 order by recap_date`,
      [id],
    );
    return toDetails(row, deliveries.rows);
  }

  async deleteSubscriber(id: string, addressHash: string): Promise<SubscriberStatus | null> {
    const result = await this.run<{ status: SubscriberStatus | null }>('select public.delete_subscriber($1, $2) as status', [id, addressHash]);
    return result.rows[0]?.status ?? null;
  }

  prunePending(days: number) {
    return this.pending.prunePending(days);
  }

  releaseConfirmation(id: string, mailboxHash: string | null = null) {
    return this.mailboxSignups.releaseConfirmation(id, mailboxHash);
  }

  async claimWelcome(id: string): Promise<boolean> {
    const result = await this.run(
      `update public.email_signups set welcomed_at = now() where id::text = $1 and welcomed_at is null and ${ACTIVE} returning 1`,
      [id],
    );
    return result.rows.length > 0;
  }

  async findSubscriber(id: string): Promise<SubscriberRecord | null> {
    const result = await this.run<SubscriberRow>(`select ${RECORD_COLUMNS} from public.email_signups where id::text = $1`, [id]);
    return result.rows[0] ? toRecord(result.rows[0]) : null;
  }

  async findSubscriberByEmail(email: string): Promise<SubscriberRecord | null> {
    const result = await this.run<SubscriberRow>(`select ${RECORD_COLUMNS} from public.email_signups where email = $1`, [normalizeEmail(email)]);
    return result.rows[0] ? toRecord(result.rows[0]) : null;
  }

  async removeSubscriber(id: string, reason: RemovalReason): Promise<boolean> {
    const result = await this.run<{ found: boolean }>('select public.mark_subscriber_left($1, $2) as found', [id, reason]);
    return result.rows[0]?.found === true;
  }

  async listActiveSubscribers(afterId: string | null, limit: number): Promise<Subscriber[]> {
    const result = await this.run<Subscriber>(
      `select id::text as id, email from public.email_signups
       where ${ACTIVE} and ($1::text is null or id::text > $1)
       order by id::text limit $2`,
      [afterId, limit],
    );
    return result.rows;
  }

  async listAllSubscribers(afterId: string | null, limit: number): Promise<SubscriberRecord[]> {
    const result = await this.run<SubscriberRow>(
      `select ${RECORD_COLUMNS} from public.email_signups
       where $1::text is null or id::text > $1
       order by id::text limit $2`,
      [afterId, limit],
    );
    return result.rows.map(toRecord);
  }

  async countSubscribers(): Promise<SubscriberCounts> {
    const result = await this.run<{ status: SubscriberStatus; n: number }>(
      'select status, count(*)::int as n from public.email_signups group by status',
    );
    return countsByStatus(result.rows);
  }

  async deliveredTo(recapDate: string, subscriberIds: readonly string[]): Promise<Set<string>> {
    if (subscriberIds.length === 0) return new Set();
    const result = await this.run<{ subscriber_id: string }>(
      `select subscriber_id from public.digest_deliveries where recap_date = $1::date and subscriber_id = any($2::text[])`,
      [recapDate, subscriberIds],
    );
    return new Set(result.rows.map((row) => row.subscriber_id));
  }

  async recordDeliveries(recapDate: string, deliveries: readonly Delivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.run(
      `insert into public.digest_deliveries (recap_date, subscriber_id, provider_message_id)
       select $1::date, d.subscriber_id, d.message_id
       from unnest($2::text[], $3::text[]) as d(subscriber_id, message_id)
       on conflict (recap_date, subscriber_id) do nothing`,
      [recapDate, deliveries.map((d) => d.subscriberId), deliveries.map((d) => d.providerMessageId)],
    );
  }

  async countDeliveries(recapDate: string): Promise<number> {
    const result = await this.run<{ n: number }>(
      'select count(*)::int as n from public.digest_deliveries where recap_date = $1::date',
      [recapDate],
    );
    return result.rows[0]?.n ?? 0;
  }

  async acquireDigestLock(recapDate: string, holder: string, leaseMs: number): Promise<boolean> {
    const result = await this.run<{ holder: string }>(
      `insert into public.digest_locks (recap_date, holder, locked_until)
       values ($1::date, $2, now() + ($3::int * interval '1 millisecond'))
       on conflict (recap_date) do update
         set holder = excluded.holder, locked_until = excluded.locked_until
         where public.digest_locks.holder = excluded.holder or public.digest_locks.locked_until < now()
       returning holder`,
      [recapDate, holder, Math.round(leaseMs)],
    );
    return result.rows.length > 0;
  }

  async releaseDigestLock(recapDate: string, holder: string): Promise<void> {
    await this.run('delete from public.digest_locks where recap_date = $1::date and holder = $2', [recapDate, holder]);
  }

  async hitRateLimit(key: string, points: number, windowMs: number, force: boolean): Promise<RateLimitCount> {
    const result = await this.run<{ count: unknown }>('select public.signup_rate_limit_hit($1, $2, $3, $4) as count', [key, points, Math.round(windowMs), force]);
    return rateLimitCount(result.rows[0]?.count)!;
  }

  async hitRateLimits(hits: readonly RateLimitHit[]): Promise<RateLimitCount[]> {
    const result = await this.run<{ counts: unknown }>('select public.signup_rate_limit_hit_many($1::text[], $2::int[], $3::int[]) as counts', [
      hits.map((hit) => hit.key),
      hits.map((hit) => hit.points),
      hits.map((hit) => Math.round(hit.windowMs)),
    ]);
    return rateLimitCounts(result.rows[0]?.counts, hits);
  }

  async peekRateLimit(key: string): Promise<RateLimitCount | null> {
    const result = await this.run<{ count: unknown }>('select public.signup_rate_limit_peek($1) as count', [key]);
    return rateLimitCount(result.rows[0]?.count);
  }

  async resetRateLimit(key: string): Promise<boolean> {
    const result = await this.run<{ reset: boolean }>('select public.signup_rate_limit_reset($1) as reset', [key]);
    return result.rows[0]?.reset === true;
  }

  async recordEmailEvent(event: EmailEvent): Promise<void> {
    await this.run(
      `insert into public.email_events (svix_id, event_type, provider_message_id, subscriber_id, occurred_at)
       values ($1, $2, $3, $4, $5) on conflict (svix_id) do nothing`,
      [event.svixId, event.type, event.providerMessageId, event.subscriberId, event.occurredAt.toISOString()],
    );
  }

  async reportSnapshot(weeks: number): Promise<ReportSnapshot> {
    const result = await this.run<{ snapshot: unknown }>('select public.report_snapshot($1::int) as snapshot', [weeks]);
    const raw = result.rows[0]?.snapshot;
    return reportSnapshotSchema.parse(typeof raw === 'string' ? JSON.parse(raw) : raw);
  }

  /** `select public.name(key := $1, …)`: the digest-batch functions, as Supabase calls them over rpc. */
  private async callFunction(name: string, args: Record<string, unknown>): Promise<unknown> {
    const keys = Object.keys(args);
    const params = keys.map((key) => {
      const value = args[key];
      return value !== null && typeof value === 'object' ? JSON.stringify(value) : value;
    });
    const result = await this.run<{ result: unknown }>(`select public.${name}(${keys.map((key, i) => `${key} := $${i + 1}`).join(', ')}) as result`, params);
    return result.rows[0]?.result ?? null;
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
    let pending: string[];
    try {
      pending = await pendingMigrations(this.client);
    } catch (error) {
      throw classifyError(error);
    }
    if (pending.length > 0) throw new MigrationsPendingError(pending);
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
