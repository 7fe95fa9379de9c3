// The e-mail's links through the site: /go/{the week's page slug}/{rank} for a launch and
// /go/{the week's page slug}/page for the recap's own page, e.g. /go/weekly-recap-july-14/3. The
// site counts the click (server/site/routes/go.ts) and redirects to exactly the URL the e-mail linked
// to before these links existed: the launch's (or the page's) URL with the e-mail's campaign
// parameters. Pure: the site address is an argument.
import type { Recap } from './schema.ts';
import { withCampaign } from './site.ts';

export const GO_PREFIX = '/go';
/** The entry that stands for the recap's page on the site. */
export const PAGE_ENTRY = 'page';

type Week = Pick<Recap, 'date' | 'path' | 'entries'>;

/** The /go/ path of a launch (by rank) or of the recap's page. */
export function goPathFor(recap: Pick<Recap, 'path'>, entry: number | typeof PAGE_ENTRY): string {
  return `${GO_PREFIX}${recap.path}/${entry}`;
}

export function goUrlFor(siteUrl: string, recap: Pick<Recap, 'path'>, entry: number | typeof PAGE_ENTRY): string {
  return `${siteUrl.replace(/\/+$/, '')}${goPathFor(recap, entry)}`;
}

/** Where a /go/ link of this week sends a reader: the URL the e-mail linked before; null for no such entry. */
export function goDestination(recap: Week, entry: string, siteUrl: string): string | null {
  const placement = { medium: 'email', week: recap.date } as const;
  if (entry === PAGE_ENTRY) return withCampaign(`${siteUrl.replace(/\/+$/, '')}${recap.path}`, placement);
  if (!/^(?:[1-9]|10)$/.test(entry)) return null;
  const launch = recap.entries.find((candidate) => candidate.rank === Number(entry));
  return launch ? withCampaign(launch.url, placement) : null;
}

/** Every /go/ link of a week, launches by rank then the page, with where each leads. */
export function goLinksOf(recap: Week, siteUrl: string): { entry: string; path: string; url: string }[] {
  const entries = [...recap.entries.map((launch) => String(launch.rank)), PAGE_ENTRY];
  return entries.map((entry) => ({ entry, path: `${GO_PREFIX}${recap.path}/${entry}`, url: goDestination(recap, entry, siteUrl)! }));
}
