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
