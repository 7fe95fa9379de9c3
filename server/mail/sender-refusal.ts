// Resend's answers that mean no message from this sender will go through until something changes:
// the key (missing, invalid, revoked, not allowed to send) or the plan's quota. Apart from the SDK
// (resend.ts loads it only when Resend is chosen), so the outbox worker can tell the causes apart.

export const QUOTA_REFUSALS: ReadonlySet<string> = new Set(['daily_quota_exceeded', 'monthly_quota_exceeded']);
export const KEY_REFUSALS: ReadonlySet<string> = new Set(['missing_api_key', 'invalid_api_key', 'restricted_api_key', 'invalid_access', 'security_error']);

/**
 * Why the sender was refused, from the reason as resend.ts words it (`name (HTTP status): message`):
 * a used-up quota passes by itself (the day or month turns, or the plan is raised); anything else
 * that refuses the sender (a 401 or 403) needs a person to fix the key.
 */
export function senderRefusalCause(reason: string): 'key' | 'quota' {
  const name = /^[a-z_]+/.exec(reason)?.[0] ?? '';
  return QUOTA_REFUSALS.has(name) ? 'quota' : 'key';
}

/** What the operator reads about a hold: what the provider refused, and what ends it. */
export function senderHoldWords(cause: 'key' | 'quota'): { subject: string; cause: string; remedy: string } {
  return cause === 'quota'
    ? {
        subject: '[Launched Weekly] E-mail held: the sending quota is used up',
        cause: 'the plan\'s daily or monthly sending quota is used up',
        remedy: 'It passes by itself when the day or the month turns over, or at once when the plan is raised in Resend.',
      }
    : {
        subject: '[Launched Weekly] E-mail held: the provider refused the API key',
        cause: 'the API key was refused (missing, invalid, revoked, or not allowed to send)',
        remedy: 'It does not pass by itself: set a valid RESEND_API_KEY that may send, and restart the server.',
      };
}
