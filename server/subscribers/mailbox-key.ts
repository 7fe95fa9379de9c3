// One mailbox, many spellings. `Reader+news@Example.org`, `reader+x@example.org` and
// `reader@example.org` reach one inbox, and so do `v.i.c.t.i.m@gmail.com`, `victim@googlemail.com`
// and `Victim+8@gmail.com`. Every limit and throttle that protects a mailbox (signups per address
// per day, confirmation e-mails per 24 hours, the suppression list of deleted complainers) counts
// by the key this module computes, so a bot cannot send one reader nine confirmations, or sign a
// complainer up again, by spelling the address another way. The address itself is stored as typed
// (only trimmed, lower-cased and with its domain in ASCII): it is where the mail goes.
//
// This is the only place the rule is written; the database receives keyed hashes of its result.
import { domainToASCII } from 'node:url';

/** Domains whose mailboxes ignore dots in the local part, and the one name they share. */
const GMAIL_DOMAINS = new Set(['gmail.com', 'googlemail.com']);
const CANONICAL_GMAIL = 'gmail.com';

// eslint-disable-next-line no-control-regex
const ASCII = /^[\u0000-\u007f]*$/;
// What an international domain's labels may hold before they are written in ASCII: letters of any
// script, digits and hyphens. IDNA itself would quietly drop a zero-width space (`exa\u200bmple.com`
// becomes example.com) and accept emoji; an address typed with those is more likely a trick or a
// slip than a domain the reader owns, so it is refused, as before this rule.
const UNICODE_LABEL = /^[\p{L}\p{N}-]+$/u;

export const NON_ASCII_DOMAIN_MESSAGE =
  'The part after the @ is not a valid domain: it has characters that no domain name, international ones included, can hold. Please check the address.';

export type CanonicalAddress = { ok: true; email: string } | { ok: false; message: string };

/**
 * The address as it is stored and mailed: trimmed, Unicode NFKC (so full-width `ｅｘａｍｐｌｅ.ｏｒｇ`
 * and `＠` become their plain forms), lower-cased, and an international domain written in ASCII
 * (IDNA, `bücher.example` → `xn--bcher-kva.example`). A domain that cannot be written in ASCII
 * is refused with a message for the reader. Whether the result is a valid address at all is
 * content/email-address.ts's `emailProblem`.
 */
export function canonicalAddress(raw: string): CanonicalAddress {
  const email = raw.normalize('NFKC').trim().toLowerCase();
  const at = email.lastIndexOf('@');
  if (at < 0) return { ok: true, email };
  const domain = email.slice(at + 1);
  if (ASCII.test(domain)) return { ok: true, email };
  if (!domain.split('.').every((label) => UNICODE_LABEL.test(label))) return { ok: false, message: NON_ASCII_DOMAIN_MESSAGE };
  const ascii = domainToASCII(domain);
  if (ascii === '' || !ASCII.test(ascii)) return { ok: false, message: NON_ASCII_DOMAIN_MESSAGE };
  return { ok: true, email: `${email.slice(0, at)}@${ascii}` };
}

/**
 * The mailbox an address reaches: lower-cased, the `+tag` dropped from the local part, and for
 * Gmail the dots dropped and googlemail.com read as gmail.com. Takes a stored (canonical) address;
 * an address that fails `canonicalAddress` is keyed as it is, since it is never stored.
 */
export function mailboxKey(email: string): string {
  const canonical = canonicalAddress(email);
  const address = canonical.ok ? canonical.email : email.trim().toLowerCase();
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  let local = address.slice(0, at);
  let domain = address.slice(at + 1);
  const plus = local.indexOf('+');
  // A local part that is only a tag (`+news@x`) is its own mailbox, not the empty one.
  if (plus > 0) local = local.slice(0, plus);
  if (GMAIL_DOMAINS.has(domain)) {
    local = local.replaceAll('.', '');
    domain = CANONICAL_GMAIL;
  }
  return `${local}@${domain}`;
}
