// The bot defences of a signup, as checks that say what they found and change nothing: a limit per
// network address, the honeypot, the disposable-domain list and a limit per mailbox. The subscribe
// route (subscribers/routes/subscribe.ts) runs them in order, makes the one database call they lead
// to and decides the answer.
import { honeypotFilled } from '../../shared/honeypot.ts';
import { networkAddressKey } from '../http/network-address-key.ts';
import type { RateLimit } from '../store/types.ts';
import { isDisposableAddress } from './disposable.ts';
import type { rateLimitHasher } from './keyed-hash.ts';

/** At most this many signups of one mailbox per day (however its address is spelled), whoever sends them. */
export const SIGNUPS_PER_ADDRESS_PER_DAY = 3;
const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

type KeyedHash = ReturnType<typeof rateLimitHasher>;

/** RATE_LIMIT_PER_MINUTE: every post to the signup route counts against its network address. */
export function networkLimit(keyedHash: KeyedHash, ip: string | undefined, perMinute: number): RateLimit {
  return { key: keyedHash('ip', networkAddressKey(ip ?? '')), limit: perMinute, windowMs: MINUTE_MS };
}

/**
 * Per mailbox, not per spelling: `mailbox` is the address's mailbox key (subscribers/mailbox-key.ts),
 * so victim+1@gmail.com and v.ictim@gmail.com share one count.
 */
export function mailboxLimit(keyedHash: KeyedHash, mailbox: string, perAddressPerDay: number): RateLimit {
  return { key: keyedHash('email', mailbox), limit: perAddressPerDay, windowMs: DAY_MS };
}

/**
 * What the screen makes of a readable address: a real signup, a bot that filled the honeypot (answered
 * as a success, nothing kept), or a throwaway domain (refused with a reason).
 */
export type ScreenVerdict = 'signup' | 'honeypot' | 'disposable';

export function screenSignup(email: string, body: unknown): ScreenVerdict {
  if (honeypotFilled(body)) return 'honeypot';
  if (isDisposableAddress(email)) return 'disposable';
  return 'signup';
}
