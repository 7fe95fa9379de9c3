// What a signup attempt can end in, and the words the reader sees for each. The JavaScript form
// shows them as toasts; without JavaScript the server redirects back with `?signup=<outcome>` and
// the form writes the same words next to itself. The server imports the codes from here.
import { site } from '../content/site.ts';

export const SIGNUP_OUTCOMES = ['subscribed', 'already-subscribed', 'confirmation-sent', 'invalid-email', 'disposable-email', 'rate-limited', 'address-rate-limited', 'unavailable'] as const;
export type SignupOutcome = (typeof SIGNUP_OUTCOMES)[number];

/** Double opt-in (SIGNUP_CONFIRMATION=double), and any signup of a suppressed address: 202. */
export const CONFIRMATION_SENT = {
  title: 'Check your inbox',
  description: 'We sent you a link to confirm your address. The Monday e-mail starts once you click it.',
} as const;

export const RATE_LIMITED_MESSAGE = 'Too many attempts from your connection. Please wait a minute and try again.';

export const ADDRESS_RATE_LIMITED_MESSAGE = 'This address has been signed up too many times today. Please try again tomorrow.';

export const DISPOSABLE_EMAIL_MESSAGE = 'Please use a permanent e-mail address, not a disposable one.';

export interface OutcomeMessage {
  title: string;
  description: string;
  destructive: boolean;
}

export function isSignupOutcome(value: string | null): value is SignupOutcome {
  return (SIGNUP_OUTCOMES as readonly string[]).includes(value ?? '');
}

export function outcomeMessage(outcome: SignupOutcome): OutcomeMessage {
  const { toasts } = site;
  switch (outcome) {
    case 'subscribed':
      return { ...toasts.subscribed, destructive: false };
    case 'already-subscribed':
      return { ...toasts.alreadySubscribed, destructive: false };
    case 'confirmation-sent':
      return { ...CONFIRMATION_SENT, destructive: false };
    case 'invalid-email':
      return { ...toasts.invalidEmail, destructive: true };
    case 'disposable-email':
      return { title: toasts.invalidEmail.title, description: DISPOSABLE_EMAIL_MESSAGE, destructive: true };
    case 'rate-limited':
      return { title: toasts.failed.title, description: RATE_LIMITED_MESSAGE, destructive: true };
    case 'address-rate-limited':
      return { title: toasts.failed.title, description: ADDRESS_RATE_LIMITED_MESSAGE, destructive: true };
    case 'unavailable':
      return { ...toasts.failed, destructive: true };
  }
}
