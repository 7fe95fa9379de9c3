// The real system a generated life runs against: the app (createApp, production build) twice on one
// store, once in each signup mode, with welcome e-mails on and the Resend webhook configured, and
// a direct SQL connection to the same database for what the checks read. Lives share it and keep
// apart by their own mailboxes, so one database serves thousands of them.
import { randomUUID } from 'node:crypto';
import { canonicalAddress, mailboxKey } from '../../server/subscribers/mailbox-key.ts';
import { importSubscriberRows } from '../../server/subscribers/import-in-chunks.ts';
import { storedMailboxKey, subscriberKeys, type SubscriberKeys } from '../../server/subscribers/subscriber-keys.ts';
import { createConfirmToken, createUnsubscribeToken } from '../../server/subscribers/signed-links.ts';
import { createFreshLinkToken, type LinkPurpose } from '../../server/subscribers/link-tokens.ts';
import type { OutboxWorker } from '../../server/mail/outbox-worker.ts';
import type { SqlClient } from '../../server/store/sql-client.ts';
import type { Store } from '../../server/store/types.ts';
import { HONEYPOT_FIELD } from '../../shared/honeypot.ts';
import { newWebhookSecret, postBounce, postComplaint } from '../support/resend-webhook.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';

export type Mode = 'single' | 'double';

/** A link the system mailed, as its recipient holds it. */
export interface MailedLink {
  kind: 'confirm' | 'link';
  purpose: LinkPurpose | null;
  subscriberId: string;
  token: string;
}

/** One e-mail the system queued in a step, by the mailbox (life-local reader number) it went to. */
export interface QueuedMail {
  reader: number;
  kind: 'confirmation' | 'welcome' | 'fresh-link' | 'referral-thanks' | 'other';
  link: MailedLink | null;
}

export interface RowState {
  id: string;
  email: string;
  status: string;
  /** The row's share code, the row whose share link created it, and the readers credited to it. */
  shareCode: string;
  referredBy: string | null;
  referrals: number;
}

export interface LifeSystem {
  servers: Record<Mode, TestServer>;
  store: Store;
  sql: SqlClient;
  keys: SubscriberKeys;
  webhookSecret: string;
  /** Highest mail_outbox id seen so far. */
  lastMailId: number;
  lives: number;
  close(): Promise<void>;
}

// The checks read what was queued (mail_outbox); rendering and writing each message would only
// spend the time thousands of lives need.
const QUEUE_ONLY: OutboxWorker = { start() {}, wake() {}, deliverDue: async () => 0, stop: async () => {} };

export async function startLifeSystem(store: Store, sql: SqlClient): Promise<LifeSystem> {
  const webhookSecret = newWebhookSecret();
  // A thanks at the first referral: with two mailboxes a life, a referrer is credited at most once at a time.
  const config = { welcomeEmail: true, resendWebhookSecret: webhookSecret, rateLimitPerMinute: 1_000_000, referralMilestones: [1] };
  const single = await startTestServer({ store, outbox: QUEUE_ONLY, config: { ...config, signupConfirmation: 'single' } });
  const double = await startTestServer({ store, outbox: QUEUE_ONLY, config: { ...config, signupConfirmation: 'double' } });
  const keys = subscriberKeys(TEST_UNSUBSCRIBE_SECRET, [], storedMailboxKey(store));
  const last = await sql.query<{ id: string | null }>('select max(id)::text as id from public.mail_outbox');
  return {
    servers: { single, double },
    store,
    sql,
    keys,
    webhookSecret,
    lastMailId: Number(last.rows[0]?.id ?? 0),
    lives: 0,
    async close() {
      await single.close();
      await double.close();
    },
  };
}

/** The spellings of one life's readers: each reader is one mailbox, written several ways. */
export function lifeSpellings(life: string): string[][] {
  return [
    [`lw.${life}@gmail.com`, `lw${life}@googlemail.com`, `LW.${life}+news@Gmail.com`, `l.w.${life}@gmail.com`],
    [`r${life}@corp.test`, `r${life}+x@corp.test`, `R${life}@Corp.Test`, `r${life}+a+b@corp.test`],
  ];
}

export const stored = (raw: string): string => {
  const canonical = canonicalAddress(raw);
  return canonical.ok ? canonical.email : raw;
};

interface StepRead {
  rows: { id: string; email: string; status: string; share_code: string; referred_by: string | null; referrals: number }[] | null;
  mails: { id: string; kind: string; subscriber_id: string | null; payload: Record<string, unknown>; created_at: string }[] | null;
}

/**
 * After a step, in one round trip: each reader's rows, found by the mailbox rule the server uses
 * (not the database's), so two rows of one mailbox would show; and the e-mails queued since the
 * last read, each given to the reader whose row it names (`readerOf`, told the rows first).
 */
export async function readStep(
  system: LifeSystem,
  spellings: readonly string[][],
  readerOf: (rows: RowState[][]) => (subscriberId: string) => number | undefined,
): Promise<{ rows: RowState[][]; mails: QueuedMail[] }> {
  const keys = spellings.map((list) => mailboxKey(list[0]!));
  // Rows by the database's mailbox or by any spelling of the life (both indexed, so a step costs the
  // same at the ten-thousandth life as at the first), then grouped by the server's rule.
  const result = await system.sql.query<StepRead>(
    `select
       (select json_agg(json_build_object('id', e.id::text, 'email', e.email, 'status', e.status, 'share_code', e.share_code, 'referred_by', e.referred_by::text,
                'referrals', (select count(*) from public.email_signups r where r.referred_by = e.id and r.first_active_at is not null)))
          from public.email_signups e where e.mailbox = any($1::text[]) or e.email = any($3::text[])) as rows,
       (select json_agg(json_build_object('id', m.id::text, 'kind', m.kind, 'subscriber_id', m.subscriber_id, 'payload', m.payload, 'created_at', m.created_at) order by m.id)
          from public.mail_outbox m where m.id > $2) as mails`,
    [keys, system.lastMailId, spellings.flat().map(stored)],
  );
  const read = result.rows[0]!;
  const parse = <T>(value: T | string | null): T | null => (typeof value === 'string' ? (JSON.parse(value) as T) : value);
  const found = (parse(read.rows) ?? []).map((row) => ({ ...row, key: mailboxKey(row.email) }));
  const rows = keys.map((key) =>
    found
      .filter((row) => row.key === key)
      .map((row) => ({ id: row.id, email: row.email, status: row.status, shareCode: row.share_code, referredBy: row.referred_by, referrals: Number(row.referrals) })),
  );
  const owner = readerOf(rows);
  const mails: QueuedMail[] = [];
  for (const row of parse(read.mails) ?? []) {
    system.lastMailId = Math.max(system.lastMailId, Number(row.id));
    const reader = row.subscriber_id === null ? undefined : owner(row.subscriber_id);
    if (reader === undefined) continue;
    mails.push({ reader, kind: MAIL_KINDS[row.kind] ?? 'other', link: linkOf(row.kind, row.subscriber_id!, row.payload, new Date(row.created_at)) });
  }
  return { rows, mails };
}

const MAIL_KINDS: Record<string, QueuedMail['kind']> = { confirm: 'confirmation', welcome: 'welcome', link: 'fresh-link', referral_thanks: 'referral-thanks' };

function linkOf(kind: string, subscriberId: string, payload: Record<string, unknown>, createdAt: Date): MailedLink | null {
  if (kind === 'confirm') {
    const version = typeof payload.version === 'number' ? payload.version : undefined;
    return { kind: 'confirm', purpose: null, subscriberId, token: createConfirmToken(subscriberId, createdAt, TEST_UNSUBSCRIBE_SECRET, version) };
  }
  if (kind === 'link') {
    const link = {
      purpose: payload.purpose as LinkPurpose,
      subscriberId,
      version: Number(payload.version),
      expiresAt: new Date(String(payload.expires_at)),
      nonce: String(payload.nonce),
    };
    return { kind: 'link', purpose: link.purpose, subscriberId, token: createFreshLinkToken(link, TEST_UNSUBSCRIBE_SECRET) };
  }
  return null;
}

const form = (body: string) => ({ method: 'POST', body, headers: { 'content-type': 'application/x-www-form-urlencoded' } });

/** A signup from the home page: plain, or through a share code (landing on the home page), or one the honeypot catches. */
export async function postSignup(system: LifeSystem, mode: Mode, email: string, via: { share?: string; trap?: boolean } = {}): Promise<number> {
  const origin = via.share === undefined ? {} : { share: via.share, landing: 'home' };
  const response = await fetch(`${system.servers[mode].url}/api/subscribe`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, source: '/', ...origin, ...(via.trap ? { [HONEYPOT_FIELD]: 'https://spam.example' } : {}) }),
  });
  await response.arrayBuffer();
  return response.status;
}

export async function postFooter(system: LifeSystem, mode: Mode, subscriberId: string, action: string): Promise<number> {
  const token = createUnsubscribeToken(subscriberId, TEST_UNSUBSCRIBE_SECRET);
  const response = await fetch(`${system.servers[mode].url}/subscription?token=${encodeURIComponent(token)}`, form(`action=${action}`));
  await response.arrayBuffer();
  return response.status;
}

export async function postOneClick(system: LifeSystem, subscriberId: string): Promise<number> {
  const token = createUnsubscribeToken(subscriberId, TEST_UNSUBSCRIBE_SECRET);
  const response = await fetch(`${system.servers.single.url}/unsubscribe?token=${encodeURIComponent(token)}`, form('List-Unsubscribe=One-Click'));
  await response.arrayBuffer();
  return response.status;
}

/** Presses a mailed link's button; the answer's status and body (the download's JSON). */
export async function pressLink(system: LifeSystem, mode: Mode, link: MailedLink): Promise<{ status: number; body: string }> {
  const path = link.kind === 'confirm' ? '/confirm' : '/subscription/link';
  const response = await fetch(`${system.servers[mode].url}${path}?token=${encodeURIComponent(link.token)}`, form(''));
  return { status: response.status, body: await response.text() };
}

/** Posts a signed Resend event (a hard bounce or a complaint) for a message to `to`. */
export async function postProviderEvent(system: LifeSystem, type: 'email.bounced' | 'email.complained', to: string): Promise<number> {
  const post = type === 'email.bounced' ? postBounce : postComplaint;
  return (await post(system.servers.single, system.webhookSecret, to)).status;
}

export async function importActive(system: LifeSystem, email: string): Promise<void> {
  await importSubscriberRows(system.store, system.keys, [{ email: stored(email), state: 'active' }]);
}

export async function operatorDelete(system: LifeSystem, row: RowState): Promise<void> {
  const [hash] = await system.keys.addressHashes(row.email);
  await system.store.deleteSubscriber(row.id, hash!);
}

/** The pending prune after the row's dates are moved back past the pending window. */
export async function agedPrune(system: LifeSystem, row: RowState): Promise<void> {
  // As time would move them: without the triggers, which would take a changed confirmation_sent_at for a new confirmation.
  await system.sql.transaction(async (tx) => {
    await tx.query('set local session_replication_role = replica');
    await tx.query(
      `update public.email_signups set pending_since = pending_since - interval '60 days',
         confirmation_sent_at = confirmation_sent_at - interval '60 days' where id::text = $1`,
      [row.id],
    );
  });
  await system.store.prunePending(30);
}

/**
 * A spelling merged into the row as the one-row-per-mailbox migration merges a legacy list's rows:
 * its own id, address and network hash kept beside the row. Returns the merged row's id, which
 * links mailed before the merge still carry.
 */
export async function mergeLegacySpelling(system: LifeSystem, row: RowState, email: string): Promise<string> {
  const id = randomUUID();
  await system.sql.query(
    `insert into public.email_signups_merged (id, merged_into, original)
     select $2, e.id::text, to_jsonb(e) || jsonb_build_object('id', $2::text, 'email', $3::text, 'signup_ip_hash', 'legacy-network-hash', 'deliveries', '[]'::jsonb)
     from public.email_signups e where e.id::text = $1`,
    [row.id, id, stored(email)],
  );
  return id;
}

/** Every spelling the store keeps of a mailbox: its row's address and any merged into it. */
export async function keptSpellings(system: LifeSystem, row: RowState): Promise<string[]> {
  const merged = await system.sql.query<{ email: string | null }>("select original ->> 'email' as email from public.email_signups_merged where merged_into = $1", [row.id]);
  return [row.email, ...merged.rows.map((r) => r.email).filter((email): email is string => email !== null)];
}

/**
 * What is left in the database of a mailbox after its deletion: rows with its key, or merged
 * spellings of any row it ever had (through the indexes, so a check costs the same late in a run).
 */
export async function leftOfMailbox(system: LifeSystem, key: string, rowIds: readonly string[]): Promise<number> {
  const result = await system.sql.query<{ n: number }>(
    `select ((select count(*) from public.email_signups where mailbox = $1)
           + (select count(*) from public.email_signups_merged where merged_into = any($2::text[]) or id = any($2::text[])))::int as n`,
    [key, rowIds],
  );
  return result.rows[0]!.n;
}
