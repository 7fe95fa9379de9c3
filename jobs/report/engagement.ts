// What readers did with each week's e-mail, for the report: the site's own /go/ click counts per
// entry and Resend's delivered and opened counts per recap (server/store/engagement.ts), put
// beside each send, with the week's launches ranked by clicks and the most clicked launches
// across the weeks shown.
import { recapPathFor } from '../../content/dates.ts';
import { goLinksOf, goPathFor, PAGE_ENTRY } from '../../content/go-links.ts';
import type { Recap } from '../../content/schema.ts';
import { weekLabel } from '../../content/text.ts';
import type { EngagementCounts } from '../../server/store/engagement.ts';

/** Why "opened" is labelled approximate, on the page and in the JSON. */
export const OPENED_NOTE =
  'Approximate: an open is counted when a mail client loads the tracking image Resend adds (when open tracking is on). Apple Mail Privacy Protection loads it for every message delivered, read or not; clients that block images never load it; one reader opening twice counts twice.';
/** What the clicks are, on the page and in the JSON. */
export const CLICKS_NOTE =
  "The site's own count of the e-mail's /go/ links: no reader is identified; robots, HEAD requests, prefetches and a repeat of the same link from one client address within 10 minutes are not counted. Click rate: clicks per message sent.";
export const TOP_LAUNCHES = 10;

export interface EntryClicks {
  rank: number;
  name: string;
  /** The e-mail's link through the site. */
  path: string;
  /** Where that link leads: the launch with the e-mail's campaign parameters; null for a week no longer in content/recaps. */
  url: string | null;
  clicks: number;
}

export interface WeekEngagement {
  recapDate: string;
  label: string;
  sent: number;
  /** Resend's email.delivered events for the recap (0 with the webhook off). */
  delivered: number;
  /** Resend's email.opened events: approximate (OPENED_NOTE). */
  opened: number;
  /** Resend's email.clicked events (link tracking on); the site's own count is `clicks`. */
  providerClicks: number;
  /** Every /go/ click of the week: its launches and its page. */
  clicks: number;
  clickRate: number;
  /** Clicks on the link to the recap's page on the site. */
  pageClicks: number;
  /** The week's launches, most clicked first (rank breaks ties). */
  entries: EntryClicks[];
}

export interface TopLaunch extends EntryClicks {
  recapDate: string;
  label: string;
}

export interface Engagement {
  openedNote: string;
  clicksNote: string;
  weeks: WeekEngagement[];
  /** The most clicked launches over every week in `weeks`, at most TOP_LAUNCHES, only those clicked. */
  topLaunches: TopLaunch[];
}

const rate = (part: number, whole: number) => (whole > 0 ? part / whole : 0);

function entriesOf(recap: Recap | undefined, recapDate: string, siteUrl: string, clicksOf: (entry: string) => number, clickedEntries: string[]): EntryClicks[] {
  const links: { entry: string; path: string; url: string | null }[] = recap
    ? goLinksOf(recap, siteUrl).filter((link) => link.entry !== PAGE_ENTRY)
    : // A week no longer in content/recaps: its counted entries, by rank, without a name or destination.
      clickedEntries.filter((entry) => entry !== PAGE_ENTRY).map((entry) => ({ entry, path: goPathFor({ path: recapPathFor(recapDate) }, Number(entry)), url: null }));
  return links
    .map((link) => ({
      rank: Number(link.entry),
      name: recap?.entries.find((launch) => String(launch.rank) === link.entry)?.name ?? `#${link.entry}`,
      path: link.path,
      url: link.url,
      clicks: clicksOf(link.entry),
    }))
    .sort((a, b) => b.clicks - a.clicks || a.rank - b.rank);
}

export function engagementOf(sends: readonly { recapDate: string; sent: number }[], counts: EngagementCounts, recaps: readonly Recap[], siteUrl: string): Engagement {
  const byDate = new Map(recaps.map((recap) => [recap.date, recap]));
  const weeks = sends.map(({ recapDate, sent }): WeekEngagement => {
    const clickRows = counts.clicks.filter((row) => row.recapDate === recapDate);
    const clicksOf = (entry: string) => clickRows.find((row) => row.entry === entry)?.clicks ?? 0;
    const eventsOf = (type: string) => counts.events.find((row) => row.recapDate === recapDate && row.type === type)?.events ?? 0;
    const clicks = clickRows.reduce((sum, row) => sum + row.clicks, 0);
    return {
      recapDate,
      label: weekLabel(recapDate),
      sent,
      delivered: eventsOf('email.delivered'),
      opened: eventsOf('email.opened'),
      providerClicks: eventsOf('email.clicked'),
      clicks,
      clickRate: rate(clicks, sent),
      pageClicks: clicksOf(PAGE_ENTRY),
      entries: entriesOf(byDate.get(recapDate), recapDate, siteUrl, clicksOf, clickRows.map((row) => row.entry)),
    };
  });
  const topLaunches = weeks
    .flatMap((week) => week.entries.filter((entry) => entry.clicks > 0).map((entry) => ({ ...entry, recapDate: week.recapDate, label: week.label })))
    .sort((a, b) => b.clicks - a.clicks || b.recapDate.localeCompare(a.recapDate) || a.rank - b.rank)
    .slice(0, TOP_LAUNCHES);
  return { openedNote: OPENED_NOTE, clicksNote: CLICKS_NOTE, weeks, topLaunches };
}
