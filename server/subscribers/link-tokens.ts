// Fresh links: what "Download my data", "Delete my data" and (single mode) "Subscribe again" mail
// to the address before they act. Each names its purpose, the subscriber, the subscriber's link
// version (supabase/migrations/20261124003010_subscriber_links.sql: bumped whenever the address
// changes state, so a link made before does not act after), an expiry one hour ahead and a random
// nonce; the database records the nonce when the link is used, so it acts once. The footer link
// of a digest (server/subscribers/signed-links.ts) stays what it was: it unsubscribes at once and shows
// the state, but can only ask for one of these to be sent to the address.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const LINK_PURPOSES = ['download', 'delete', 'resubscribe'] as const;
export type LinkPurpose = (typeof LINK_PURPOSES)[number];

export const FRESH_LINK_MINUTES = 60;
const FRESH_LINK_MS = FRESH_LINK_MINUTES * 60 * 1000;
const MAC_BYTES = 32;
const NONCE_BYTES = 16;
const MAX_TOKEN_LENGTH = 512;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
const BASE36 = /^[0-9a-z]{1,11}$/;
const FORMAT = 'f1';

export interface FreshLink {
  purpose: LinkPurpose;
  subscriberId: string;
  version: number;
  expiresAt: Date;
  nonce: string;
}

export type FreshLinkCheck = { ok: true; link: FreshLink } | { ok: false; reason: 'invalid' | 'expired'; link?: FreshLink };

function mac(fields: readonly string[], secret: string): Buffer {
  const hmac = createHmac('sha256', secret).update('fresh link\0');
  for (const field of fields) hmac.update(field).update('\0');
  return hmac.digest();
}

/** A new link's random nonce and its expiry, one hour after `now`. */
export function newFreshLink(now: Date): { nonce: string; expiresAt: Date } {
  return { nonce: randomBytes(NONCE_BYTES).toString('base64url'), expiresAt: new Date(Math.floor((now.getTime() + FRESH_LINK_MS) / 1000) * 1000) };
}

/** The token of a fresh link: the same inputs always give the same token. */
export function createFreshLinkToken(link: FreshLink, secret: string): string {
  const fields = [
    FORMAT,
    link.purpose,
    Buffer.from(link.subscriberId, 'utf8').toString('base64url'),
    link.version.toString(36),
    Math.floor(link.expiresAt.getTime() / 1000).toString(36),
    link.nonce,
  ];
  return [...fields, mac(fields, secret).toString('base64url')].join('.');
}

/** Parses the fields of a token; null for anything that is not one of ours in shape. */
function parse(token: string): { fields: string[]; given: Buffer; link: FreshLink } | null {
  const parts = token.split('.');
  if (parts.length !== 7) return null;
  const [format, purpose, idPart, version, expires, nonce, macPart] = parts as [string, string, string, string, string, string, string];
  if (format !== FORMAT || !LINK_PURPOSES.includes(purpose as LinkPurpose)) return null;
  if (!BASE64URL.test(idPart) || !BASE36.test(version) || !BASE36.test(expires) || !BASE64URL.test(nonce) || !BASE64URL.test(macPart)) return null;
  const id = Buffer.from(idPart, 'base64url');
  const subscriberId = id.toString('utf8');
  // Only the canonical encodings: one link has exactly one valid text.
  if (id.toString('base64url') !== idPart || !Buffer.from(subscriberId, 'utf8').equals(id)) return null;
  if (Buffer.from(nonce, 'base64url').length !== NONCE_BYTES || Buffer.from(nonce, 'base64url').toString('base64url') !== nonce) return null;
  const given = Buffer.from(macPart, 'base64url');
  if (given.length !== MAC_BYTES || given.toString('base64url') !== macPart) return null;
  const link = { purpose: purpose as LinkPurpose, subscriberId, version: parseInt(version, 36), expiresAt: new Date(parseInt(expires, 36) * 1000), nonce };
  return { fields: parts.slice(0, 6), given, link };
}

/** Whether a fresh-link token is ours and unexpired at `now` (its single use is the database's to check). */
export function verifyFreshLinkToken(token: unknown, now: Date, secret: string, previousSecrets: readonly string[] = []): FreshLinkCheck {
  const invalid = { ok: false, reason: 'invalid' } as const;
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return invalid;
  const parsed = parse(token);
  if (!parsed) return invalid;
  if (![secret, ...previousSecrets].some((candidate) => timingSafeEqual(parsed.given, mac(parsed.fields, candidate)))) return invalid;
  // Checked after the signature, so "expired" is only ever said of a link we made.
  if (now.getTime() >= parsed.link.expiresAt.getTime()) return { ok: false, reason: 'expired', link: parsed.link };
  return { ok: true, link: parsed.link };
}

export function freshLinkUrlFor(siteUrl: string, token: string): string {
  return `${siteUrl.replace(/\/+$/, '')}/subscription/link?token=${encodeURIComponent(token)}`;
}

/** The rate-limit key counting fresh links sent for a subscriber: keyed, so it names no one. */
export function freshLinkThrottleKey(subscriberId: string, secret: string): string {
  return `fresh-link:${createHmac('sha256', secret).update('fresh link throttle\0').update(subscriberId).digest('base64url')}`;
}

/** `r•••@example.org`: enough for the owner to recognise, too little for anyone else to use. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf('@');
  if (at <= 0) return '•••';
  return `${Array.from(email.slice(0, at))[0]}•••${email.slice(at)}`;
}
