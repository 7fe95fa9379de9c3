// Preview links let the curator (and whoever they forward the link to) see a coming week on the
// real site before it is public. A link names the week and when it stops working, signed with a key
// derived from UNSUBSCRIBE_SECRET under its own purpose label, so no other token of this site
// (unsubscribe, confirmation) can pass as one, nor one of these as them.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isIsoDate } from '../../content/dates.ts';

export const PREVIEW_TOKEN_DAYS = 7;
const DAY_MS = 24 * 60 * 60 * 1000;
const MAC_BYTES = 32;
const TOKEN = /^(\d{4}-\d{2}-\d{2})\.([0-9a-z]{1,11})\.([A-Za-z0-9_-]{43})$/;

function previewKey(secret: string): Buffer {
  return createHmac('sha256', secret).update('launched-weekly preview link key v1').digest();
}

function mac(week: string, expires: string, secret: string): Buffer {
  return createHmac('sha256', previewKey(secret)).update(`${week}\0${expires}`).digest();
}

/** A token for the week dated `week` (`2026-11-30`), valid for 7 days from `now`. */
export function createPreviewToken(week: string, now: Date, secret: string): string {
  const expires = Math.floor((now.getTime() + PREVIEW_TOKEN_DAYS * DAY_MS) / 1000).toString(36);
  return `${week}.${expires}.${mac(week, expires, secret).toString('base64url')}`;
}

export type PreviewTokenCheck = { ok: true; week: string; expiresAt: Date } | { ok: false; reason: 'invalid' | 'expired' };

export function verifyPreviewToken(token: unknown, now: Date, secret: string): PreviewTokenCheck {
  const invalid = { ok: false, reason: 'invalid' } as const;
  if (typeof token !== 'string') return invalid;
  const match = TOKEN.exec(token);
  if (!match) return invalid;
  const [, week, expires, macPart] = match as unknown as [string, string, string, string];
  const given = Buffer.from(macPart, 'base64url');
  if (given.length !== MAC_BYTES || given.toString('base64url') !== macPart) return invalid;
  if (!timingSafeEqual(given, mac(week, expires, secret)) || !isIsoDate(week)) return invalid;
  // Checked after the signature, so "expired" is only ever said of a link this site made.
  const expiresAt = new Date(parseInt(expires, 36) * 1000);
  if (now.getTime() >= expiresAt.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, week, expiresAt };
}

/** The preview address of a week's page. */
export function previewUrlFor(siteUrl: string, path: string, token: string): string {
  return `${siteUrl.replace(/\/+$/, '')}${path}?preview=${encodeURIComponent(token)}`;
}

/** The preview of a week's e-mail, as it will be sent. */
export function previewEmailUrlFor(siteUrl: string, token: string): string {
  return `${siteUrl.replace(/\/+$/, '')}/preview/email?preview=${encodeURIComponent(token)}`;
}
