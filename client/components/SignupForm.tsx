import { useId, useState, useSyncExternalStore, type FormEvent } from 'react';
import { useLocation, useSearchParams } from 'react-router-dom';
import { looksLikeEmail } from '../../content/email-address.ts';
import { site } from '../../content/site.ts';
import { HONEYPOT_FIELD } from '../../shared/honeypot.ts';
import { CONFIRMATION_SENT, isSignupOutcome, outcomeMessage } from '../../shared/signup-outcome.ts';
import { showToast, type ToastMessage } from '../toast.tsx';
import { OriginFields, useCarriedOrigin } from '../origin.tsx';

type Variant = 'card' | 'inline';

const noSubscription = () => () => {};

interface SubscribeReply {
  status?: string;
  error?: string;
  message?: string;
}

/** Maps the answer of POST /api/subscribe to the seed's toast (section 8). */
function toastFor(status: number, reply: SubscribeReply | null): ToastMessage {
  const { toasts } = site;
  if (status === 201) return toasts.subscribed;
  if (status === 409) return toasts.alreadySubscribed;
  if (status === 202) return CONFIRMATION_SENT;
  if (status === 400 && reply?.error === 'invalid_email') {
    return { title: toasts.invalidEmail.title, description: reply.message ?? toasts.invalidEmail.description, destructive: true };
  }
  return { title: toasts.failed.title, description: reply?.message || toasts.failed.description, destructive: true };
}

/**
 * The e-mail signup block. Every page has exactly one, with id `email-signup`, so the top bar's
 * Subscribe entry always has somewhere to go. Without JavaScript it is a plain form that posts
 * and comes back to this page with the outcome written below it.
 */
export function SignupForm({ variant = 'card' }: { variant?: Variant }) {
  const inputId = useId();
  const noteId = useId();
  const trapId = useId();
  const { pathname } = useLocation();
  const [searchParams] = useSearchParams();
  const origin = useCarriedOrigin();
  const [email, setEmail] = useState('');
  const [submitting, setSubmitting] = useState(false);
  const [outcomeDismissed, setOutcomeDismissed] = useState(false);

  // Once hydrated the form validates itself (so the seed's 'Invalid email' toast can show);
  // before that, and without JavaScript, the browser's own checks of type=email/required apply.
  const enhanced = useSyncExternalStore(noSubscription, () => true, () => false);

  const redirectOutcome = searchParams.get('signup');
  const outcome = !outcomeDismissed && isSignupOutcome(redirectOutcome) ? outcomeMessage(redirectOutcome) : null;

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setOutcomeDismissed(true);
    // Sent only when something filled it: the server then answers as if it worked and keeps nothing.
    const trap = new FormData(event.currentTarget).get(HONEYPOT_FIELD);
    if (!looksLikeEmail(email)) {
      showToast({ ...site.toasts.invalidEmail, destructive: true });
      return;
    }
    setSubmitting(true);
    try {
      const response = await fetch('/api/subscribe', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ email, source: pathname, ...origin, ...(trap ? { [HONEYPOT_FIELD]: trap } : {}) }),
      });
      const reply = (await response.json().catch(() => null)) as SubscribeReply | null;
      showToast(toastFor(response.status, reply));
      if (response.status === 201 || response.status === 202) setEmail('');
    } catch {
      showToast({ ...site.toasts.failed, destructive: true });
    } finally {
      setSubmitting(false);
    }
  }

  const isCard = variant === 'card';
  return (
    <section
      id="email-signup"
      aria-labelledby={`${inputId}-heading`}
      className={isCard ? 'scroll-mt-24 rounded-2xl border border-zinc-200 bg-white p-6 shadow-sm sm:p-8' : 'scroll-mt-24'}
    >
      <h2 id={`${inputId}-heading`} className="text-xl font-bold text-ink">
        {site.signup.heading}
      </h2>
      <p className="mt-1 text-muted">{site.signup.text}</p>
      <form
        method="post"
        action="/api/subscribe"
        noValidate={enhanced}
        onSubmit={onSubmit}
        className="mt-4 flex flex-col gap-3 sm:flex-row"
      >
        <input type="hidden" name="source" value={pathname} />
        <OriginFields />
        {/* The bot trap (shared/honeypot.ts): moved off-screen rather than display:none, which some
            bots skip; hidden from screen readers (aria-hidden), out of the Tab order and never
            autofilled, so no person fills it. */}
        <div aria-hidden="true" className="absolute -left-[10000px] top-auto h-px w-px overflow-hidden">
          <label htmlFor={trapId}>Leave this field empty</label>
          <input id={trapId} type="text" name={HONEYPOT_FIELD} tabIndex={-1} autoComplete="off" defaultValue="" />
        </div>
        <label htmlFor={inputId} className="sr-only">
          {site.signup.label}
        </label>
        <input
          id={inputId}
          type="email"
          name="email"
          required
          autoComplete="email"
          placeholder={site.signup.placeholder}
          value={email}
          onChange={(event) => setEmail(event.target.value)}
          disabled={submitting}
          aria-describedby={noteId}
          className="min-h-11 w-full flex-1 rounded-lg border border-zinc-400 bg-white px-4 text-base text-ink placeholder:text-zinc-500 disabled:opacity-60"
        />
        <button
          type="submit"
          disabled={submitting}
          className="min-h-11 rounded-lg bg-ink px-6 font-semibold text-white hover:bg-zinc-700 disabled:opacity-60"
        >
          {submitting ? site.signup.submitting : site.signup.button}
        </button>
      </form>
      <p id={noteId} className="mt-2 text-sm text-muted">
        {site.signup.note}
      </p>
      {outcome && (
        <p role="status" className={`mt-3 rounded-lg p-3 text-sm ${outcome.destructive ? 'bg-red-50 text-red-800' : 'bg-green-50 text-green-900'}`}>
          <strong>{outcome.title}</strong> {outcome.description}
        </p>
      )}
    </section>
  );
}
