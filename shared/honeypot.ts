// The signup form's trap for bots: a field people never see, hear or reach, which form-filling
// bots fill like any other. The server answers a filled one as if the signup worked and keeps
// nothing, so the bot learns nothing to adapt to. Shared by the form and the server.

/** A name bots fill and browsers do not autofill (there is no autofill type for it). */
export const HONEYPOT_FIELD = 'website';

/** True when the trap field came back with anything in it. */
export function honeypotFilled(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const value = (body as Record<string, unknown>)[HONEYPOT_FIELD];
  if (value === undefined || value === null) return false;
  return typeof value !== 'string' || value.trim() !== '';
}
