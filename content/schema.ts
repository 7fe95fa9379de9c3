// The shape of a weekly recap, as zod schemas with the TypeScript types inferred from them.
// Everything downstream (pages, e-mails, feeds, the digest job) imports these types; nothing
// re-declares a recap's shape.
import * as z from 'zod';
import { isIsoDate, isIsoInstant, recapPathFor } from './dates.ts';
import { LAUNCH_PLATFORM } from './site.ts';

// Words that mean "not written yet". A scaffolded week starts with empty strings, which fail the
// non-empty rule; these catch the other ways unfinished text slips through.
const PLACEHOLDER = /\b(?:lorem\s+ipsum|todo|tbd|fixme|placeholder)\b/i;

const prose = (what: string) =>
  z
    .string()
    .trim()
    .min(1, `${what} must not be empty`)
    .refine((text) => !PLACEHOLDER.test(text), `${what} still holds placeholder text`);

const productLink = z
  .string()
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === 'https:' && url.hostname === LAUNCH_PLATFORM.host && url.pathname.length > 1;
    } catch {
      return false;
    }
  }, `must be an absolute https URL of a product page on ${LAUNCH_PLATFORM.host}`);

export const recapEntrySchema = z.strictObject({
  rank: z.int().min(1).max(10),
  name: prose('product name'),
  url: productLink,
  tagline: prose('tagline'),
  upvotes: z.int('upvotes must be a whole number').nonnegative('upvotes must not be negative'),
  note: prose("editor's note"),
});

/** Per-page presentation choices the original pages varied on (seed §1 and §2). */
export const recapLayoutSchema = z.strictObject({
  /** Sticky yellow banner inviting readers to support the project on the launch platform. */
  supportBanner: z.boolean(),
  /** What closes the page: the signup card, or the call-to-action block that scrolls to it. */
  ending: z.enum(['signup', 'call-to-action']),
  /** A '← Back to home' link above the header. */
  backLink: z.boolean(),
  /** Upvotes on their own line under the tagline, or appended to the tagline after a dash. */
  upvotes: z.enum(['own-line', 'after-tagline']),
});

export const recapSchema = z
  .strictObject({
    /** Start of the week the recap covers, `YYYY-MM-DD`. */
    date: z.string().refine(isIsoDate, 'date must be a real date in YYYY-MM-DD form'),
    /** Route of the page, derived from the date by recapPathFor (dates.ts): `/weekly-recap-{month}-{day}`, with `-{year}` from 2026 on. */
    path: z.string(),
    /**
     * Days since the previous week when it is not the usual 7 (weeks were skipped). Declared in the
     * week's own file, so a gap of any length is written where it happens, by new-recap, without
     * touching the rules.
     */
    daysAfterPrevious: z.int('daysAfterPrevious must be a whole number of days').min(1, 'daysAfterPrevious must be at least 1').optional(),
    /**
     * When the week becomes public, as an ISO instant with its offset (`2026-11-30T07:00:00Z`).
     * Left out (the usual case), it is the week's date at 09:00 in DIGEST_TZ (content/publication.ts).
     */
    publishAt: z
      .string()
      .refine(isIsoInstant, 'publishAt must be an ISO date and time with its offset, such as 2026-11-30T09:00:00Z or 2026-11-30T10:00:00+01:00')
      .optional(),
    /** The week's theme, shown under 'Week of {date}'. */
    headline: prose('headline'),
    /** The title on archive and home cards. */
    title: prose('title'),
    /** The paragraph in the card under the header. */
    intro: prose('intro'),
    entries: z.array(recapEntrySchema).length(10, 'a recap has exactly 10 entries'),
    layout: recapLayoutSchema,
  })
  .superRefine((recap, ctx) => {
    if (isIsoDate(recap.date) && recap.path !== recapPathFor(recap.date)) {
      ctx.addIssue({
        code: 'custom',
        path: ['path'],
        message: `path must be "${recapPathFor(recap.date)}" for date ${recap.date}`,
      });
    }
    recap.entries.forEach((entry, index) => {
      if (entry.rank !== index + 1) {
        ctx.addIssue({
          code: 'custom',
          path: ['entries', index, 'rank'],
          message: `entry ${index + 1} has rank ${entry.rank}; ranks run 1 to 10 in order`,
        });
      }
      const previous = recap.entries[index - 1];
      if (previous && entry.upvotes > previous.upvotes) {
        ctx.addIssue({
          code: 'custom',
          path: ['entries', index, 'upvotes'],
          message: `#${index + 1} has ${entry.upvotes} upvotes, more than #${index} (${previous.upvotes}); entries are sorted by upvotes, highest first`,
        });
      }
    });
  });

export type Recap = z.infer<typeof recapSchema>;
export type RecapEntry = z.infer<typeof recapEntrySchema>;
export type RecapLayout = z.infer<typeof recapLayoutSchema>;
/** What a card in the archive or on the home page needs. */
export type RecapSummary = Pick<Recap, 'date' | 'path' | 'title' | 'headline'>;
