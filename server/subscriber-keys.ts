// Keyed hashes of personal values we must recognise but should not keep: the client's network
// address in a consent record, and the address of a deleted subscriber on the suppression list.
// HMAC-SHA256 with keys derived from UNSUBSCRIBE_SECRET, each under its own label, so neither
// hash can be recomputed without the secret (an IPv4 address is only 2^32 guesses away from a
// plain hash) and neither key can stand in for the other or for the link-signing key.
import { createHmac } from 'node:crypto';
import { normalizeEmail } from '../content/email-address.ts';

const deriveKey = (secret: string, label: string) => createHmac('sha256', secret).update(`launched-weekly key\0${label}`).digest();

export interface SubscriberKeys {
  /** The consent record's hash of a client network address. */
  networkHash(address: string | undefined): string | null;
  /**
   * The suppression list's hashes of an address: under the current secret first, then the
   * previous one, so a rotation of UNSUBSCRIBE_SECRET does not forget who is suppressed.
   */
  addressHashes(email: string): string[];
}

export function subscriberKeys(secret: string, previousSecrets: readonly string[] = []): SubscriberKeys {
  const networkKey = deriveKey(secret, 'consent network address');
  const addressKeys = [secret, ...previousSecrets].map((s) => deriveKey(s, 'suppressed address'));
  return {
    networkHash(address) {
      return address ? createHmac('sha256', networkKey).update(address).digest('base64url') : null;
    },
    addressHashes(email) {
      const normalised = normalizeEmail(email);
      return addressKeys.map((key) => createHmac('sha256', key).update(normalised).digest('base64url'));
    },
  };
}
