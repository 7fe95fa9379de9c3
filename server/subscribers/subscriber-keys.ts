// Keyed hashes of personal values we must recognise but should not keep: the client's network
// address in a consent record, and the mailbox of a deleted subscriber on the suppression list
// (which also keys the per-mailbox confirmation throttle). HMAC-SHA256, so neither hash can be
// recomputed without its key (an IPv4 address is only 2^32 guesses away from a plain hash).
//
// The network hash is keyed by UNSUBSCRIBE_SECRET under its own label. The mailbox hash is not: a
// suppression list keyed by the link secret forgets everyone after two rotations. Its key is made
// once, at random, and kept in the database (Store.mailboxHashKey), so it works alike on all three
// backends and survives any number of rotations. Hashes the list holds from before, made of the
// exact address under the current or previous UNSUBSCRIBE_SECRET, are still offered after it, and
// the database re-keys them to the mailbox hash the first time they match.
import { createHmac, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';
import { normalizeEmail } from '../../content/email-address.ts';
import { mailboxKey } from './mailbox-key.ts';

// KeyObjects rather than Buffers: Node checks a Buffer key afresh on every createHmac,
// which would cost more than a signup's own hashing.
const deriveKey = (secret: string, label: string): KeyObject => createSecretKey(createHmac('sha256', secret).update(`launched-weekly key\0${label}`).digest());

export interface SubscriberKeys {
  /** The consent record's hash of a client network address. */
  networkHash(address: string | undefined): string | null;
  /**
   * The suppression list's hashes of an address: first the hash of its mailbox (server/subscribers/mailbox-key.ts)
   * under the stored key, then the older hashes of the exact address under the current and the
   * previous secret.
   */
  addressHashes(email: string): Promise<string[]>;
}

/** Where the mailbox key lives: the store, which creates it on first use. */
export interface MailboxKeySource {
  mailboxHashKey(candidate: string): Promise<string>;
}

/** The stored mailbox key, asked for once per process (a failed attempt is tried again next time). */
export function storedMailboxKey(source: MailboxKeySource): () => Promise<string> {
  let key: Promise<string> | undefined;
  return () => {
    key ??= source.mailboxHashKey(randomBytes(32).toString('base64url')).catch((error: unknown) => {
      key = undefined;
      throw error;
    });
    return key;
  };
}

export function subscriberKeys(secret: string, previousSecrets: readonly string[], mailboxHashKey: () => Promise<string>): SubscriberKeys {
  const networkKey = deriveKey(secret, 'consent network address');
  const legacyKeys = [secret, ...previousSecrets].map((s) => deriveKey(s, 'suppressed address'));
  // The mailbox key, derived once per stored key (the store answers the same one every time).
  let derived: { from: string; key: KeyObject } | undefined;
  const mailboxKeyObject = async () => {
    const stored = await mailboxHashKey();
    if (derived?.from !== stored) derived = { from: stored, key: deriveKey(stored, 'mailbox') };
    return derived.key;
  };
  return {
    networkHash(address) {
      return address ? createHmac('sha256', networkKey).update(address).digest('base64url') : null;
    },
    async addressHashes(email) {
      const mailboxKeyBytes = await mailboxKeyObject();
      const normalised = normalizeEmail(email);
      return [
        createHmac('sha256', mailboxKeyBytes).update(mailboxKey(email)).digest('base64url'),
        ...legacyKeys.map((key) => createHmac('sha256', key).update(normalised).digest('base64url')),
      ];
    },
  };
}
