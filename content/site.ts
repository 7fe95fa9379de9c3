// Every fixed text and link of the site in one place. Quoted strings from the product
// specification are copied here word for word; pages, e-mails and feeds read them from here.

export const LAUNCH_PLATFORM = {
  name: 'Launched by Lovable',
  url: 'https://launched.lovable.app',
  host: 'launched.lovable.app',
} as const;

export const site = {
  name: 'Launched Weekly',
  description:
    'The ten most upvoted launches on Launched by Lovable, recapped every week with an editor’s note on each. Free every Monday.',
  hero: {
    title: 'Launched on',
    logoAlt: 'Launched by Lovable',
    line: "Lovable's most upvoted products, recapped weekly by... another thing built with Lovable.",
    italicLine: 'Yes, this site is very on brand.',
    // 'Every Monday, get a curated Top 10 from Launched by Lovable — with commentary, trends, and standout picks.'
    mondayBefore: 'Every Monday, get a curated Top 10 from ',
    mondayLink: 'Launched by Lovable',
    mondayAfter: ' — with commentary, trends, and standout picks.',
  },
  home: {
    latestHeading: 'Latest Top 10s',
    viewAll: 'View All Weekly Recaps',
    followHeading: 'Follow along for updates',
    followX: 'Follow on X',
    followLinkedIn: 'Follow on LinkedIn',
  },
  archive: {
    heading: 'Weekly Recap Archive',
    subtitle: 'Browse all our weekly top 10 roundups',
  },
  recap: {
    weekOf: (date: string) => `Week of ${date}`,
    subtitle: 'Your weekly Top 10 from Launched by Lovable',
    readRecap: 'Read Recap',
    editorsNote: "Editor's Note",
    upvotes: (n: number) => `${n} ${n === 1 ? 'upvote' : 'upvotes'}`,
    documentTitle: (date: string) => `Weekly Recap: ${date}`,
    backToHome: '← Back to home',
    supportBanner: 'Enjoying Launched Weekly? Support it with an upvote on Launched by Lovable.',
    supportBannerLink: 'Upvote Launched Weekly',
  },
  callToAction: {
    heading: 'Get the best of Launched — weekly.',
    text: 'This recap rounds up the Top 10 launches every Monday, with notes on what stood out and why.',
    button: 'Subscribe now →',
  },
  signup: {
    heading: 'Get the Top 10 every Monday',
    text: 'One e-mail a week with the ten most upvoted launches and what we think of them.',
    label: 'Email address',
    placeholder: 'Enter your email',
    button: 'Subscribe',
    submitting: 'Subscribing...',
    note: 'Free forever. Unsubscribe anytime.',
  },
  // Seed section 8, the error catalogue. The no-JavaScript form shows the same words as text.
  toasts: {
    invalidEmail: { title: 'Invalid email', description: 'Please enter a valid email address.' },
    alreadySubscribed: { title: 'Already subscribed!', description: 'This email is already on our list.' },
    failed: { title: 'Something went wrong', description: 'Please try again later.' },
    subscribed: { title: "You're In!", description: "Now you'll know what's hot before it hits your group chat." },
  },
  about: {
    heading: 'About Launched Weekly',
    feedbackLink: 'Send feedback',
  },
  social: {
    x: 'https://x.com/launchedweekly',
    linkedin: 'https://www.linkedin.com/company/launched-weekly',
  },
  contactEmail: 'hello@launchedweekly.com',
  footerCredit: { before: 'Built in Lisbon with ', tool: 'Lovable', toolUrl: 'https://lovable.dev' },
  notFound: {
    heading: 'Page not found',
    text: 'There is no page at this address. The recap you are after may be in the archive.',
  },
} as const;

/**
 * Campaign parameters on outbound links to the launch platform and its product pages. The seed's
 * values: the source is always 'launched-weekly'; the medium says where the link sits ('site' for
 * home, archive and about, 'recap' on a recap page, 'email' in the Monday e-mail, 'rss' in the
 * feed); the campaign is 'weekly-recap' for site pages and names the week everywhere else.
 */
export type CampaignPlacement =
  | { medium: 'site' }
  | { medium: 'recap'; week: string }
  | { medium: 'email'; week: string }
  | { medium: 'rss'; week: string };

export const CAMPAIGN_SOURCE = 'launched-weekly';

export function campaignFor(placement: CampaignPlacement): { source: string; medium: string; campaign: string } {
  if (placement.medium === 'site') {
    return { source: CAMPAIGN_SOURCE, medium: 'site', campaign: 'weekly-recap' };
  }
  return { source: CAMPAIGN_SOURCE, medium: placement.medium, campaign: `weekly-recap-${placement.week}` };
}

/** Adds utm_source/utm_medium/utm_campaign to an absolute URL, keeping its own query and hash. */
export function withCampaign(url: string, placement: CampaignPlacement): string {
  const target = new URL(url);
  const { source, medium, campaign } = campaignFor(placement);
  target.searchParams.set('utm_source', source);
  target.searchParams.set('utm_medium', medium);
  target.searchParams.set('utm_campaign', campaign);
  return target.toString();
}
