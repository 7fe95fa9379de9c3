// Throwaway-mailbox domains, from a maintained list package (disposable-email-domains-js, which
// republishes the community list github.com/disposable-email-domains/disposable-email-domains)
// rather than a list kept here. A subdomain of a listed domain counts as listed: these services
// hand out any name under their domain.
import { disposableEmailBlocklistSet } from 'disposable-email-domains-js';

let listed: Set<string> | undefined;

/** True when the (normalised) address's domain, or a parent of it, is a disposable-mail domain. */
export function isDisposableAddress(email: string): boolean {
  listed ??= disposableEmailBlocklistSet();
  const labels = email.slice(email.lastIndexOf('@') + 1).split('.');
  for (let i = 0; i < labels.length - 1; i++) {
    if (listed.has(labels.slice(i).join('.'))) return true;
  }
  return false;
}
