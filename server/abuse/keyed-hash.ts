// Keyed hashes (HMAC-SHA256) of network and e-mail addresses, for the rate-limit counters: the
// database then holds no address, and without the server's secret a leaked table cannot be
// matched against a list of addresses. The key is derived from UNSUBSCRIBE_SECRET under its own
// label, as server/subscribers/subscriber-keys.ts does for its hashes, so no two uses share a key; `kind`
// keeps an e-mail and a network address that happen to be the same text apart.
import { createHmac, createSecretKey } from 'node:crypto';

export function rateLimitHasher(secret: string): (kind: 'ip' | 'email', value: string) => string {
  // A KeyObject, not the Buffer: Node checks a Buffer key afresh on every createHmac, a KeyObject once.
  const key = createSecretKey(createHmac('sha256', secret).update('launched-weekly key\0signup rate limit').digest());
  return (kind, value) => createHmac('sha256', key).update(`${kind}\0${value}`).digest('base64url');
}
