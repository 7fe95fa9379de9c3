// Unsubscribe links carry the subscriber's id and an HMAC of it, never the address: a link that
// leaks (forwarded mail, proxy logs) names no one, and only this server can mint a valid one.
import { createHmac, timingSafeEqual } from 'node:crypto';

const MAC_BYTES = 32;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
// Longer than any real id; bounds the work a hostile query string can cause.
const MAX_TOKEN_LENGTH = 512;

function mac(id: Buffer, secret: string): Buffer {
  // The purpose prefix keeps a MAC made with the same secret for anything else from passing here.
  return createHmac('sha256', secret).update('unsubscribe\0').update(id).digest();
}

export function createUnsubscribeToken(subscriberId: string, secret: string): string {
  const id = Buffer.from(subscriberId, 'utf8');
  return `${id.toString('base64url')}.${mac(id, secret).toString('base64url')}`;
}

/**
 * The subscriber id a token was made for, or null for anything malformed, truncated or forged.
 * `previousSecrets` keeps links in mail already sent working after UNSUBSCRIBE_SECRET is rotated;
 * new links are always made with the current secret.
 */
export function verifyUnsubscribeToken(token: unknown, secret: string, previousSecrets: readonly string[] = []): string | null {
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
  const parts = token.split('.');
  if (parts.length !== 2) return null;
  const [idPart, macPart] = parts as [string, string];
  if (!BASE64URL.test(idPart) || !BASE64URL.test(macPart)) return null;
  const id = Buffer.from(idPart, 'base64url');
  // Only the canonical encoding is accepted, so one id has exactly one valid token text.
  if (id.toString('base64url') !== idPart) return null;
  const given = Buffer.from(macPart, 'base64url');
  if (given.length !== MAC_BYTES || given.toString('base64url') !== macPart) return null;
  if (![secret, ...previousSecrets].some((candidate) => timingSafeEqual(given, mac(id, candidate)))) return null;
  const subscriberId = id.toString('utf8');
  return Buffer.from(subscriberId, 'utf8').equals(id) ? subscriberId : null;
}

export function unsubscribeUrlFor(siteUrl: string, token: string): string {
  return `${siteUrl.replace(/\/+$/, '')}/unsubscribe?token=${encodeURIComponent(token)}`;
}

/** The subscription page ('Your subscription') takes the same token as the unsubscribe link. */
export function subscriptionUrlFor(siteUrl: string, token: string): string {
  return `${siteUrl.replace(/\/+$/, '')}/subscription?token=${encodeURIComponent(token)}`;
}

// Confirmation links (double opt-in) name the record, the moment they were made and the record's
// link version when the e-mail was queued (supabase/migrations/20261128006010_owner_confirmations.sql),
// and stop working after CONFIRM_TOKEN_DAYS: a link found in an old mailbox months later must not
// add anyone, and a link mailed before a bounce, a complaint or an unsubscribe must not undo it.
// Their own purpose label keeps an unsubscribe token from passing as one, and back. Links mailed
// before versions (`id.issued.mac`) still verify, with no version; the database lets them confirm
// a pending record only.
export const CONFIRM_TOKEN_DAYS = 7;
const CONFIRM_TOKEN_MS = CONFIRM_TOKEN_DAYS * 24 * 60 * 60 * 1000;
const BASE36 = /^[0-9a-z]{1,11}$/;

function confirmMac(id: Buffer, issued: string, version: string | null, secret: string): Buffer {
  const hmac = createHmac('sha256', secret);
  if (version === null) return hmac.update('confirm\0').update(issued).update('\0').update(id).digest();
  return hmac.update('confirm versioned\0').update(issued).update('\0').update(version).update('\0').update(id).digest();
}

/** A confirmation link's token; `version` omitted gives the form mailed before link versions. */
export function createConfirmToken(subscriberId: string, issuedAt: Date, secret: string, version?: number): string {
  const id = Buffer.from(subscriberId, 'utf8');
  const issued = Math.floor(issuedAt.getTime() / 1000).toString(36);
  const versionPart = version === undefined ? null : version.toString(36);
  const mac = confirmMac(id, issued, versionPart, secret).toString('base64url');
  return [id.toString('base64url'), issued, ...(versionPart === null ? [] : [versionPart]), mac].join('.');
}

/** `version` is absent for a link mailed before confirmation links carried one. */
export type ConfirmTokenCheck = { ok: true; subscriberId: string; version?: number } | { ok: false; reason: 'invalid' | 'expired' };

/** Whether a confirmation token is genuine and still within its 7 days at `now`. */
export function verifyConfirmToken(token: unknown, now: Date, secret: string, previousSecrets: readonly string[] = []): ConfirmTokenCheck {
  const invalid = { ok: false, reason: 'invalid' } as const;
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return invalid;
  const parts = token.split('.');
  if (parts.length !== 3 && parts.length !== 4) return invalid;
  const [idPart, issued] = parts as [string, string];
  const versionPart = parts.length === 4 ? parts[2]! : null;
  const macPart = parts.at(-1)!;
  if (!BASE64URL.test(idPart) || !BASE36.test(issued) || (versionPart !== null && !BASE36.test(versionPart)) || !BASE64URL.test(macPart)) return invalid;
  // Only the canonical encodings: one link has exactly one valid text.
  if (versionPart !== null && parseInt(versionPart, 36).toString(36) !== versionPart) return invalid;
  const id = Buffer.from(idPart, 'base64url');
  if (id.toString('base64url') !== idPart) return invalid;
  const given = Buffer.from(macPart, 'base64url');
  if (given.length !== MAC_BYTES || given.toString('base64url') !== macPart) return invalid;
  if (![secret, ...previousSecrets].some((candidate) => timingSafeEqual(given, confirmMac(id, issued, versionPart, candidate)))) return invalid;
  const subscriberId = id.toString('utf8');
  if (!Buffer.from(subscriberId, 'utf8').equals(id)) return invalid;
  // Checked after the signature, so an expired answer is only ever given for a link we made.
  if (now.getTime() - parseInt(issued, 36) * 1000 > CONFIRM_TOKEN_MS) return { ok: false, reason: 'expired' };
  return versionPart === null ? { ok: true, subscriberId } : { ok: true, subscriberId, version: parseInt(versionPart, 36) };
}

export function confirmUrlFor(siteUrl: string, token: string): string {
  return `${siteUrl.replace(/\/+$/, '')}/confirm?token=${encodeURIComponent(token)}`;
}
