// Row shapes and mappings the SQL and Supabase stores share, so both give the same answers.
import {
  SUBSCRIBER_STATUSES,
  type SignupDecision,
  type SignupResult,
  type SubscriberCounts,
  type SubscriberDetails,
  type SubscriberStatus,
} from './types.ts';

/** The states each of the owner's own steps may start from (activate_subscriber's p_from). */
export const ACTIVATE_FROM = {
  // The confirmation e-mail is the owner's word for a pending signup, and the only way back
  // for an address that bounced or complained.
  confirmation: ['pending', 'bounced', 'complained'],
  // Their own page's button, reached from a link mailed to them: only what the reader did can be
  // undone this way; a bounce or a complaint needs a fresh confirmation.
  resubscribe: ['unsubscribed', 'pending'],
} as const satisfies Record<string, readonly SubscriberStatus[]>;

/** addSignup's older two-valued answer: anything but a new activation is "already there". */
export const singleModeResult = (decision: SignupDecision): SignupResult => (decision.outcome === 'subscribed' ? 'subscribed' : 'already_subscribed');

export function countsByStatus(rows: readonly { status: SubscriberStatus; n: number }[]): SubscriberCounts {
  const byStatus = Object.fromEntries(SUBSCRIBER_STATUSES.map((status) => [status, 0])) as Record<SubscriberStatus, number>;
  for (const row of rows) byStatus[row.status] += Number(row.n);
  const all = Object.values(byStatus).reduce((sum, n) => sum + n, 0);
  return { active: byStatus.active, inactive: all - byStatus.active, byStatus };
}

type Time = Date | string;
const time = (value: Time) => new Date(value);
const maybeTime = (value: Time | null) => (value === null ? null : new Date(value));

export interface DetailsRow {
  id: string | number;
  email: string;
  status: SubscriberStatus;
  created_at: Time;
  status_changed_at: Time;
  source: string | null;
  resubscribed_at: Time | null;
  confirmed_at: Time | null;
  unsubscribed_at: Time | null;
  signup_ip_hash: string | null;
  confirm_ip_hash: string | null;
  welcomed_at: Time | null;
}

export const DETAILS_COLUMNS =
  'id,email,status,created_at,status_changed_at,source,resubscribed_at,confirmed_at,unsubscribed_at,signup_ip_hash,confirm_ip_hash,welcomed_at';

export function toDetails(row: DetailsRow, deliveries: readonly { recap_date: string; sent_at: Time }[]): SubscriberDetails {
  return {
    id: String(row.id),
    email: row.email,
    status: row.status,
    active: row.status === 'active',
    createdAt: time(row.created_at),
    statusChangedAt: time(row.status_changed_at),
    source: row.source,
    signedUpAt: time(row.resubscribed_at ?? row.created_at),
    confirmedAt: maybeTime(row.confirmed_at),
    leftAt: maybeTime(row.unsubscribed_at),
    signupNetworkHash: row.signup_ip_hash,
    confirmNetworkHash: row.confirm_ip_hash,
    welcomedAt: maybeTime(row.welcomed_at),
    deliveries: deliveries.map((d) => ({ recapDate: d.recap_date.slice(0, 10), sentAt: time(d.sent_at) })),
  };
}
