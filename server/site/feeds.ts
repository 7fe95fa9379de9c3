// The machine-read documents: the RSS feed for readers, the sitemap and robots.txt for crawlers.
// Each is a pure function of the recaps and the site's address, so every process (and every
// restart) serves byte-identical bodies until the content changes with a deploy.
import { byDateNewestFirst, parseIsoDate } from '../../content/dates.ts';
import type { Recap } from '../../content/schema.ts';
import { site, withCampaign } from '../../content/site.ts';
import { weekTitle } from '../../content/text.ts';
import { escapeHtml } from './html.ts';

export const FEED_PATH = '/rss.xml';
export const SITEMAP_PATH = '/sitemap.xml';
export const ROBOTS_PATH = '/robots.txt';

/** The pages that are not recaps, in the order a crawler should meet them. */
const SITE_PAGES = ['/', '/archive', '/about'] as const;

function newestDate(recaps: readonly Recap[]): string {
  const newest = recaps.reduce<string | undefined>((latest, recap) => (latest === undefined || recap.date > latest ? recap.date : latest), undefined);
  if (newest === undefined) throw new Error('The feeds need at least one recap');
  return newest;
}

/** The item's title, worded like the Monday e-mail's subject: 'Week of July 14, 2025: …'. */
export function feedItemTitle(recap: Recap): string {
  return weekTitle(recap);
}

/** The whole recap as HTML for a feed reader: every link absolute, product links tagged as coming from the feed. */
export function recapFeedHtml(recap: Recap, siteUrl: string): string {
  const placement = { medium: 'rss', week: recap.date } as const;
  const entries = recap.entries.map((entry) => {
    const link = `<a href="${escapeHtml(withCampaign(entry.url, placement))}">${escapeHtml(entry.name)}</a>`;
    return [
      '<li>',
      `<p><strong>#${entry.rank} ${link}</strong></p>`,
      `<p>${escapeHtml(entry.tagline)} — ${escapeHtml(site.recap.upvotes(entry.upvotes))}</p>`,
      `<p><em>${escapeHtml(site.recap.editorsNote)}:</em> ${escapeHtml(entry.note)}</p>`,
      '</li>',
    ].join('');
  });
  const pageUrl = `${siteUrl}${recap.path}`;
  return [
    `<h2>${escapeHtml(recap.title)}</h2>`,
    `<p>${escapeHtml(recap.intro)}</p>`,
    `<ol>${entries.join('')}</ol>`,
    `<p><a href="${escapeHtml(pageUrl)}">Read this recap on ${escapeHtml(site.name)}</a> · <a href="${escapeHtml(`${siteUrl}/#email-signup`)}">${escapeHtml(site.signup.heading)}</a></p>`,
  ].join('\n');
}

/**
 * How many weeks the feed carries: readers poll it for what is new, and each item is a week's full
 * text, so ten years of weeks would make every poll download megabytes. The sitemap lists them all.
 */
export const FEED_ITEM_COUNT = 20;

/**
 * RSS 2.0 with an Atom self link: one item per recap for the newest 20, newest first, full text in
 * content:encoded. The feed library (and its XML writer) is loaded by the first feed asked for, not
 * at start: pages are what nearly every request wants, and it would be resident for all of them.
 */
export async function buildRssFeed(recaps: readonly Recap[], siteUrl: string): Promise<string> {
  const { Feed } = await import('feed');
  const newestFirst = [...recaps].sort(byDateNewestFirst).slice(0, FEED_ITEM_COUNT);
  const feed = new Feed({
    title: site.name,
    description: site.description,
    id: `${siteUrl}/`,
    link: `${siteUrl}/`,
    language: 'en',
    // The newest recap's date, not the clock: a restart must not make every reader refetch.
    updated: parseIsoDate(newestDate(recaps)),
    generator: site.name,
    feedLinks: { rss: `${siteUrl}${FEED_PATH}` },
  });
  for (const recap of newestFirst) {
    const url = `${siteUrl}${recap.path}`;
    // No guid or id given: the library then uses the link as the guid with isPermaLink="true",
    // which is what the recap's address is: permanent, unique and dereferenceable.
    feed.addItem({
      title: feedItemTitle(recap),
      link: url,
      date: parseIsoDate(recap.date),
      description: recap.intro,
      content: recapFeedHtml(recap, siteUrl),
      extensions: [{ name: 'dc:creator', objects: { _text: site.name } }],
    });
  }
  return feed.rss2();
}

function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[ch]!);
}

/**
 * Every public page with the date it last changed. A recap changes on its own date; home and
 * archive change whenever a recap is added. About has no date of its own in the content: it is
 * given the newest recap's date because a hand-kept constant would go stale unnoticed, and the
 * page is re-published with every weekly deploy (its signup card and footer are shared).
 */
export function buildSitemap(recaps: readonly Recap[], siteUrl: string): string {
  const newest = newestDate(recaps);
  const entries = [
    ...SITE_PAGES.map((path) => ({ loc: `${siteUrl}${path}`, lastmod: newest })),
    ...[...recaps].sort(byDateNewestFirst).map((recap) => ({ loc: `${siteUrl}${recap.path}`, lastmod: recap.date })),
  ];
  const urls = entries.map(({ loc, lastmod }) => `  <url>\n    <loc>${escapeXml(loc)}</loc>\n    <lastmod>${lastmod}</lastmod>\n  </url>`);
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">',
    ...urls,
    '</urlset>',
    '',
  ].join('\n');
}

/** Everything may be crawled; pages that should stay out of search results say so themselves (noindex). */
export function buildRobotsTxt(siteUrl: string): string {
  return ['User-agent: *', 'Allow: /', '', `Sitemap: ${siteUrl}${SITEMAP_PATH}`, ''].join('\n');
}
