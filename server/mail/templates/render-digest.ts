// Turns a recap into the Monday e-mail's HTML and plain-text parts. Every subscriber's copy differs
// only in the unsubscribe link (and the subscription page's, with the same token) and the share link, so a run renders the template once per recap and then swaps a
// marker for each subscriber's link: thousands of copies cost string replaces, not React renders.
import { render } from '@react-email/components';
import { createElement } from 'react';
import type { Recap } from '../../../content/schema.ts';
import { weekTitle } from '../../../content/text.ts';
import { siteHomeOf, subscriptionUrlFromUnsubscribe, WeeklyDigestEmail, type WeeklyDigestEmailProps } from './WeeklyDigestEmail.tsx';

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

// html-to-text capitalises headings by default; the text part should read like the HTML one.
const plainTextOptions = {
  plainText: true,
  htmlToTextOptions: {
    selectors: [
      ...['h1', 'h2', 'h3'].map((selector) => ({ selector, options: { uppercase: false } })),
      // The share link shows its own address as its text: written once, not twice.
      { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    ],
  },
} as const;

export function webUrlFor(recap: Pick<Recap, 'path'>, siteUrl: string): string {
  return `${siteUrl.replace(/\/+$/, '')}${recap.path}`;
}

// Both parts are kept to one-byte (Latin-1) characters. The job serialises a batch of 100 copies
// into one JSON body; V8 stores a string with any character above U+00FF at two bytes per
// character, and one such character anywhere in the batch makes the whole body two-byte. One-byte
// bodies are about 40 % cheaper to serialise and encode (bench/RESULTS.md, "Weekly digest").
//
// In the HTML part that is lossless: such characters become numeric character references.
export const toLatin1Html = (html: string) => html.replace(/[\u0100-\u{10ffff}]/gu, (char) => `&#${char.codePointAt(0)};`);

// In the plain-text part, typographic punctuation gets its ASCII spelling, as plain text
// traditionally has it. Anything else outside Latin-1 stays as written (correct, only slower).
const PLAIN_TEXT_SPELLING: Record<string, string> = { '\u2018': "'", '\u2019': "'", '\u201c': '"', '\u201d': '"', '\u2013': '-', '\u2014': '--', '\u2026': '...', '\u2192': '->' };
const TYPOGRAPHIC = new RegExp(`[${Object.keys(PLAIN_TEXT_SPELLING).join('')}]`, 'g');
export const plainTextSpelling = (text: string) => text.replace(TYPOGRAPHIC, (char) => PLAIN_TEXT_SPELLING[char]!);

export async function renderDigestEmail(props: WeeklyDigestEmailProps): Promise<RenderedEmail> {
  const element = createElement(WeeklyDigestEmail, props);
  const [html, text] = await Promise.all([render(element), render(element, plainTextOptions)]);
  return { subject: weekTitle(props.recap), html: toLatin1Html(html), text: plainTextSpelling(text) };
}

// Letters only: survives HTML escaping and text conversion unchanged, and no real link contains it.
const MARKER_URL = 'https://unsubscribe.invalid/LWDIGESTUNSUBSCRIBEMARKER';
const SUBSCRIPTION_MARKER_URL = 'https://subscription.invalid/LWDIGESTSUBSCRIPTIONMARKER';
const SHARE_MARKER_URL = 'https://share.invalid/LWDIGESTSHAREMARKER';


const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

// Split on either marker: the parts alternate text, marker, text, ...
const MARKERS = new RegExp(`(${MARKER_URL}|${SUBSCRIPTION_MARKER_URL}|${SHARE_MARKER_URL})`.replace(/\./g, '\\.'));

/**
 * A copy from a template rendered with the marker links: the digest job stores templates (so a
 * batch can be resent word for word after a crash) and personalizes them with this. The
 * subscription page's link is derived from the unsubscribe link (same signed token).
 */
export function personalizeTemplate(template: RenderedEmail, unsubscribeUrl: string, shareUrl = siteHomeOf(unsubscribeUrl.slice(0, unsubscribeUrl.lastIndexOf('/unsubscribe')))): RenderedEmail {
  const subscriptionUrl = subscriptionUrlFromUnsubscribe(unsubscribeUrl);
  const fill = (body: string, links: Record<string, string>) =>
    body
      .split(MARKERS)
      .map((part) => links[part] ?? part)
      .join('');
  return {
    subject: template.subject,
    html: fill(template.html, { [MARKER_URL]: escapeAttribute(unsubscribeUrl), [SUBSCRIPTION_MARKER_URL]: escapeAttribute(subscriptionUrl), [SHARE_MARKER_URL]: escapeAttribute(shareUrl) }),
    text: fill(template.text, { [MARKER_URL]: unsubscribeUrl, [SUBSCRIPTION_MARKER_URL]: subscriptionUrl, [SHARE_MARKER_URL]: shareUrl }),
  };
}

export interface PreparedDigest {
  recap: Recap;
  subject: string;
  webUrl: string;
  /** The rendered e-mail with markers where each subscriber's unsubscribe and subscription links go. */
  template: RenderedEmail;
  /** This subscriber's copy: the rendered template with their unsubscribe, subscription page and share links in place. */
  personalize(unsubscribeUrl: string, shareUrl?: string): RenderedEmail;
}

export async function prepareDigest(recap: Recap, siteUrl: string): Promise<PreparedDigest> {
  const webUrl = webUrlFor(recap, siteUrl);
  const template = await renderDigestEmail({ recap, webUrl, siteUrl, unsubscribeUrl: MARKER_URL, subscriptionUrl: SUBSCRIPTION_MARKER_URL, shareUrl: SHARE_MARKER_URL });
  if (!template.html.includes(MARKER_URL) || !template.text.includes(MARKER_URL)) {
    throw new Error('The digest template lost its unsubscribe link: both parts must contain it.');
  }
  return {
    recap,
    subject: template.subject,
    webUrl,
    template,
    personalize: (unsubscribeUrl, shareUrl) => personalizeTemplate(template, unsubscribeUrl, shareUrl),
  };
}
