// The subscriber's life as one table: for every state a mailbox can be in and every event that can
// reach it, the state it is in afterwards and the e-mail the event sends (DESIGN.md "Subscriber
// states", "Links in e-mails", "The subscriber's life is one table"). It states the rules as they
// are meant; docs/subscriber-lifecycle.md is rendered from it (tests/subscriber-model/ holds the two
// equal) and the model-based test in tests/subscriber-model/ checks the store against it over
// generated lives.
//
// A state is the mailbox's, not a spelling's: `a+tag@x`, `A@x` and dotted Gmail spellings are one
// mailbox and one row. A deleted mailbox has no row, but one deleted while bounced or complained
// stays on the suppression list, so those two are states of their own.

export const STATES = ['none', 'none-bounced', 'none-complained', 'pending', 'active', 'unsubscribed', 'bounced', 'complained'] as const;
export type LifeState = (typeof STATES)[number];

export const STATE_TEXT: Record<LifeState, string> = {
  none: 'no row (never signed up, deleted, or pruned)',
  'none-bounced': 'no row, on the suppression list as bounced',
  'none-complained': 'no row, on the suppression list as complained',
  pending: 'pending: signed up in double mode, nobody confirmed',
  active: 'active: gets the Monday e-mail',
  unsubscribed: 'unsubscribed by the reader',
  bounced: 'bounced: the delivery address hard-bounced',
  complained: 'complained: marked as spam',
};

export const EVENTS = [
  'signup-single',
  'signup-double',
  'signup-shared-single',
  'signup-shared-double',
  'confirm-current',
  'confirm-old',
  'footer-unsubscribe',
  'footer-resubscribe-single',
  'footer-resubscribe-double',
  'footer-download',
  'footer-delete',
  'footer-replace-share',
  'fresh-resubscribe',
  'fresh-download',
  'fresh-delete',
  'fresh-old',
  'one-click-unsubscribe',
  'bounce-delivery',
  'bounce-other',
  'complaint',
  'import',
  'operator-delete',
  'digest-run',
  'pending-prune',
  'pending-prune-confirmed-before',
] as const;
export type LifeEvent = (typeof EVENTS)[number];

/**
 * Who can cause an event: the owner acting from their inbox, anyone holding a link from a mail
 * (a forwarded digest, an old e-mail), anyone at all (a signup), or the system.
 */
export type Actor = 'owner' | 'link holder' | 'anyone' | 'system';

export const EVENT_TEXT: Record<LifeEvent, { text: string; actor: Actor }> = {
  'signup-single': { text: 'signup, single mode, in any spelling of the mailbox', actor: 'anyone' },
  'signup-double': { text: 'signup, double mode, in any spelling of the mailbox', actor: 'anyone' },
  'signup-shared-single': { text: "signup through a reader's share link, single mode (the link's owner is credited: see below)", actor: 'anyone' },
  'signup-shared-double': { text: "signup through a reader's share link, double mode (the link's owner is credited: see below)", actor: 'anyone' },
  'confirm-current': { text: 'confirmation link mailed at the current link version, button pressed', actor: 'owner' },
  'confirm-old': { text: 'confirmation link mailed before the row last changed state, button pressed', actor: 'link holder' },
  'footer-unsubscribe': { text: 'footer page (the footer token: owner or a forwarded digest): Unsubscribe', actor: 'link holder' },
  'footer-resubscribe-single': { text: 'footer page: Subscribe again, single mode', actor: 'link holder' },
  'footer-resubscribe-double': { text: 'footer page: Subscribe again, double mode', actor: 'link holder' },
  'footer-download': { text: 'footer page: Download my data (asks for a fresh link)', actor: 'link holder' },
  'footer-delete': { text: 'footer page: Delete my data (asks for a fresh link)', actor: 'link holder' },
  'footer-replace-share': { text: 'footer page: Replace my share link (the old link stops crediting)', actor: 'link holder' },
  'fresh-resubscribe': { text: 'fresh link (current version, unused): Subscribe me again', actor: 'owner' },
  'fresh-download': { text: 'fresh link (current version, unused): Download my data', actor: 'owner' },
  'fresh-delete': { text: 'fresh link (current version, unused): Delete my data', actor: 'owner' },
  'fresh-old': { text: 'fresh link used already, expired, or made before the row last changed state', actor: 'link holder' },
  'one-click-unsubscribe': { text: 'one-click unsubscribe (List-Unsubscribe post, or the /unsubscribe button) of any digest ever sent', actor: 'link holder' },
  'bounce-delivery': { text: 'hard bounce of the delivery address (the spelling the owner last confirmed or used)', actor: 'system' },
  'bounce-other': { text: 'hard bounce of a spelling nobody confirmed or used', actor: 'system' },
  complaint: { text: 'complaint (marked as spam) from the provider', actor: 'system' },
  import: { text: "the operator's import of the address as active", actor: 'system' },
  'operator-delete': { text: "the operator's delete of the subscriber", actor: 'system' },
  'digest-run': { text: 'the Monday digest run', actor: 'system' },
  'pending-prune': { text: 'the pending prune, the row never confirmed and unconfirmed past the pending window', actor: 'system' },
  'pending-prune-confirmed-before': { text: 'the pending prune, the row unconfirmed past the pending window but confirmed by its owner once', actor: 'system' },
};

/**
 * What an event mails: `welcome` only when WELCOME_EMAIL=on and the address was never welcomed;
 * `confirmation` and `fresh-link` are throttled (see `Transition.throttled`).
 */
export const MAILS = ['none', 'confirmation', 'welcome', 'fresh-link', 'digest'] as const;
export type LifeMail = (typeof MAILS)[number];

export interface Transition {
  next: LifeState;
  mail: LifeMail;
  /**
   * The mail may be held back by a throttle: a mailbox's confirmations from signups (one a day), and
   * everything a link holder can cause (LINK_HOLDER_MAILS_PER_WEEK), so it is sent at most, not always.
   */
  throttled?: true;
}

/** E-mails that link holders (the footer page's buttons) may cause to one mailbox in a week. */
export const LINK_HOLDER_MAILS_PER_WEEK = 3;

const stay = (state: LifeState): Transition => ({ next: state, mail: 'none' });
const to = (next: LifeState, mail: LifeMail = 'none'): Transition => ({ next, mail });
const throttled = (next: LifeState, mail: LifeMail): Transition => ({ next, mail, throttled: true });

const ROWLESS = ['none', 'none-bounced', 'none-complained'] as const;
/** A state in which the mailbox has no row (never signed up, or deleted, perhaps still suppressed). */
export const isRowless = (state: LifeState): state is (typeof ROWLESS)[number] => (ROWLESS as readonly string[]).includes(state);

/** What a row's deletion leaves: nothing, or the suppression of a bounced or complained mailbox. */
function deleted(state: LifeState): LifeState {
  if (state === 'bounced' || state === 'none-bounced') return 'none-bounced';
  if (state === 'complained' || state === 'none-complained') return 'none-complained';
  return 'none';
}

/** A signup, by mode. A suppressed mailbox gets its row back as it was suppressed; only a bounced one is mailed, to confirm. */
function signup(state: LifeState, mode: 'single' | 'double'): Transition {
  switch (state) {
    case 'none':
      return mode === 'single' ? to('active', 'welcome') : throttled('pending', 'confirmation');
    case 'none-bounced':
    case 'bounced':
      return throttled('bounced', 'confirmation');
    case 'none-complained':
    case 'complained':
      return stay('complained');
    case 'pending':
      return mode === 'single' ? to('active', 'welcome') : throttled('pending', 'confirmation');
    case 'unsubscribed':
      // Double mode: waiting for the owner's confirmation again, which gets no digest meanwhile.
      return mode === 'single' ? to('active', 'welcome') : throttled('pending', 'confirmation');
    case 'active':
      return stay('active');
  }
}

/** The footer page's buttons: the token travels with every forwarded digest, so nothing but unsubscribing acts at once. */
function footer(state: LifeState, event: LifeEvent): Transition {
  if (isRowless(state)) return stay(state);
  switch (event) {
    case 'footer-unsubscribe':
      return state === 'active' || state === 'pending' ? to('unsubscribed') : stay(state);
    case 'footer-resubscribe-single':
    case 'footer-resubscribe-double':
      if (state === 'active') return stay(state);
      // In either mode: a fresh link to the inbox, which is the owner's confirmation when followed.
      if (state === 'bounced' || state === 'complained') return throttled(state, 'confirmation');
      return throttled(state, 'fresh-link');
    default:
      return throttled(state, 'fresh-link');
  }
}

/** Leaving by the provider's report: a complaint always, a bounce only of the address the owner confirmed or used. */
function providerReport(state: LifeState, event: LifeEvent): Transition {
  if (event === 'complaint') return to(isRowless(state) ? 'none-complained' : 'complained');
  if (event === 'bounce-other' || isRowless(state)) return stay(state);
  // A pending row's spelling reaches no inbox either: it stays bounced, and the owner's own spelling
  // signing up is still mailed a confirmation (see signup).
  return state === 'active' || state === 'unsubscribed' || state === 'pending' ? to('bounced') : stay(state);
}

/** The next state of a mailbox and the mail sent, for one event. */
export function next(state: LifeState, event: LifeEvent): Transition {
  switch (event) {
    case 'signup-single':
      return signup(state, 'single');
    case 'signup-double':
      return signup(state, 'double');
    // A share link changes nothing of the mailbox that signs up: only whom its arrival is credited to.
    case 'signup-shared-single':
      return signup(state, 'single');
    case 'signup-shared-double':
      return signup(state, 'double');
    // The share code is not consent: replacing it changes no state and mails nothing.
    case 'footer-replace-share':
      return stay(state);
    case 'confirm-current':
      if (isRowless(state) || state === 'active') return stay(state);
      return to('active', 'welcome');
    case 'fresh-resubscribe':
      return state === 'unsubscribed' || state === 'pending' ? to('active', 'welcome') : stay(state);
    case 'fresh-delete':
    case 'operator-delete':
      return to(deleted(state));
    case 'one-click-unsubscribe':
      return state === 'active' || state === 'pending' ? to('unsubscribed') : stay(state);
    case 'bounce-delivery':
    case 'bounce-other':
    case 'complaint':
      return providerReport(state, event);
    case 'import':
      if (state === 'none') return to('active');
      if (state === 'none-bounced') return to('bounced');
      if (state === 'none-complained') return to('complained');
      return stay(state);
    case 'digest-run':
      return state === 'active' ? to('active', 'digest') : stay(state);
    case 'pending-prune':
      return state === 'pending' ? to('none') : stay(state);
    // A reader who once confirmed is never pruned: their row waits for them, getting no digest.
    case 'pending-prune-confirmed-before':
      return stay(state);
    case 'confirm-old':
    case 'fresh-download':
    case 'fresh-old':
      return stay(state);
    default:
      return footer(state, event);
  }
}

/** The whole table, state by state. */
export function lifecycleTable(): { state: LifeState; event: LifeEvent; transition: Transition }[] {
  return STATES.flatMap((state) => EVENTS.map((event) => ({ state, event, transition: next(state, event) })));
}

const cell = ({ next: state, mail, throttled: held }: Transition, from: LifeState) =>
  `${state === from ? '=' : `**${state}**`}${mail === 'none' ? '' : ` + ${mail}${held ? '*' : ''}`}`;

/** docs/subscriber-lifecycle.md, rendered from the table. */
export function lifecycleMarkdown(): string {
  const header = `| event | who | ${STATES.join(' | ')} |`;
  const rule = `|---|---|${STATES.map(() => '---').join('|')}|`;
  const rows = EVENTS.map((event) => `| ${EVENT_TEXT[event].text} | ${EVENT_TEXT[event].actor} | ${STATES.map((state) => cell(next(state, event), state)).join(' | ')} |`);
  return [
    '# The subscriber\'s life',
    '',
    'Generated from [server/subscribers/lifecycle.ts](../server/subscribers/lifecycle.ts) by',
    '`npx tsx scripts/subscriber-lifecycle.ts`; `tests/subscriber-model/lifecycle-doc.test.ts` fails when',
    'the two differ. The model-based test (`tests/subscriber-model/`) checks the store against this',
    'table over thousands of generated lives on PGlite and PostgreSQL.',
    '',
    'A state is a mailbox\'s: every spelling of it (`a+tag@x`, `A@x`, dotted Gmail, googlemail) is the',
    'same row. Each cell is the state after the event (`=`: unchanged) and the e-mail it sends.',
    `\`*\`: throttled, so sent at most, not always: a mailbox's confirmations from signups go at most once a day, and link holders (the footer page's buttons) cause at most ${LINK_HOLDER_MAILS_PER_WEEK} e-mails to a mailbox a week.`,
    '`welcome` goes only when `WELCOME_EMAIL=on` and the address was never welcomed before.',
    '',
    '## States',
    '',
    ...STATES.map((state) => `- \`${state}\`: ${STATE_TEXT[state]}`),
    '',
    '## Events × states',
    '',
    header,
    rule,
    ...rows,
    '',
    '## What the table promises',
    '',
    '- Consent changes only by an act from the inbox: no event of a `link holder` turns a row active,',
    '  or brings it back from unsubscribed, bounced or complained; a holder of a forwarded digest can',
    '  unsubscribe at once and ask for a link to be mailed to the address, nothing more. A signup by',
    '  `anyone` makes an address active only in single mode (the seed\'s immediate signup), and only',
    '  one that was never suppressed.',
    '- A confirmed reader leaves `active` only by their own act (unsubscribe, delete), a complaint, or',
    '  a bounce of the address they confirmed or used.',
    '- A complained mailbox is mailed again only when its owner asks from their own footer page and',
    '  then confirms from the inbox.',
    '- A deleted mailbox leaves no row naming any of its spellings; a bounced or complained one stays',
    '  suppressed by a keyed hash of the mailbox.',
    '',
    '## Referral credit',
    '',
    "A signup through a reader's share link (`/r/{code}`) is the signup of its mode for the mailbox that",
    "signs up. Beside the table, it credits the link's owner:",
    '',
    '- only when that signup creates the mailbox\'s row (from a state with no row): never a mailbox',
    "  already on the list, so never the owner's own mailbox, and never twice for one mailbox;",
    '- only through the code the owner has now: a replaced code still leads to the site, crediting nobody;',
    '- from the moment the new row is first `active` (at once in single mode, at the confirmation in',
    '  double mode), for good: an unsubscribe later does not take it back;',
    '- until the credited row is deleted (or pruned), which takes its credit with it; a deleted owner',
    "  leaves nobody credited, and the owner's next row starts from none.",
    '',
    'At each of the operator\'s `REFERRAL_MILESTONES` the owner\'s row reaches, one thanks e-mail is',
    'queued to the owner, if active then; each milestone of a row is thanked at most once.',
    '',
  ].join('\n');
}
