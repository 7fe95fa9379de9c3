// The words of a reader's share link: on their subscription page, in the Monday e-mail's footer
// and in the thanks the operator's REFERRAL_MILESTONES send. Plain text, no markup.
import { site } from './site.ts';

const readers = (count: number) => (count === 1 ? '1 reader' : `${count} readers`);

export const referralText = {
  pageHeading: 'Your share link',
  pageIntro: `Send this link to anyone who might like ${site.name}. Whoever signs up through it and confirms counts for you; we never tell you who.`,
  pageCount: (count: number) => (count === 0 ? 'Nobody has joined through your link yet.' : `${readers(count)} joined through your link so far.`),
  replace: 'Replace my share link',
  replaceNote: 'A new link stops the old one from counting; the old one still leads to our site.',
  replaced: 'Done: your share link is new. The old one no longer counts.',
  digestFooter: 'Know someone who would like this? Your own share link:',
  thanks: {
    subject: (count: number) => `${readers(count)} joined ${site.name} through your link`,
    heading: 'Thank you for sharing',
    body: (count: number) =>
      `${readers(count)} signed up for ${site.name} through your share link and confirmed. That is how a small newsletter grows. Thank you.`,
    button: 'See your share link',
  },
} as const;
