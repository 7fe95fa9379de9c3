// Rules for the address a reader signs up with. Plain functions rather than a zod schema so the
// browser bundle can use the seed's quick check without shipping a validation library; the server
// wraps `emailProblem` in its request schema.

export const MAX_EMAIL_LENGTH = 254;
const MAX_LOCAL_PART = 64;

/** The value the database stores: trimmed and lower-cased (seed §5). */
export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

/** The browser's check before sending (seed §5): non-empty and containing an at sign. */
export function looksLikeEmail(raw: string): boolean {
  const value = raw.trim();
  return value.length > 0 && value.includes('@');
}

// Letters, digits and the punctuation RFC 5321 allows unquoted in a local part.
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
// A domain label: letters (any script, for internationalised domains), digits and inner hyphens.
const DOMAIN_LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;
const TOP_LEVEL = /^(?:\p{L}{2,63}|xn--[a-z0-9-]{1,59})$/u;

/**
 * Why a (normalised) address cannot be accepted, in words a reader understands, or null when it
 * can. Stricter than the browser's check: the server is the gate for what reaches the database.
 */
export function emailProblem(email: string): string | null {
  if (email.length === 0) return 'Please enter your email address.';
  if (email.length > MAX_EMAIL_LENGTH) return `An email address has at most ${MAX_EMAIL_LENGTH} characters.`;
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/u.test(email)) return 'An email address cannot contain spaces or control characters.';
  const parts = email.split('@');
  if (parts.length !== 2) return 'An email address has exactly one @ sign.';
  const [local, domain] = parts as [string, string];
  if (local.length === 0 || local.length > MAX_LOCAL_PART || !LOCAL_PART.test(local)) {
    return 'The part before the @ is not a valid mailbox name.';
  }
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((label) => DOMAIN_LABEL.test(label)) || !TOP_LEVEL.test(labels.at(-1)!)) {
    return 'The part after the @ is not a valid domain, like example.com.';
  }
  return null;
}
