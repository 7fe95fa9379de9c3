// A keyed hash (HMAC-SHA256) of a network or e-mail address, for the rate-limit counters: the
// database then holds no address, and without the server's secret a leaked table cannot be
// matched against a list of addresses. `kind` keeps an e-mail and an IP that happen to be the
// same text apart.
import { createHmac } from 'node:crypto';

export function keyedHash(secret: string, kind: string, value: string): string {
  return createHmac('sha256', secret).update(`${kind}\0${value}`).digest('base64url');
}
