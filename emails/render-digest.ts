// Turns a recap into the Monday e-mail's HTML and plain-text parts. Every subscriber's copy differs
// only in the unsubscribe link, so a run renders the template once per recap and then swaps a
// marker for each subscriber's link: thousands of copies cost string replaces, not React renders.
import { render } from '@react-email/render';
import { createElement } from 'react';
import type { Recap } from '../content/schema.ts';
import { digestSubject, WeeklyDigestEmail, type WeeklyDigestEmailProps } from './WeeklyDigestEmail.tsx';

export interface RenderedEmail {
  subject: string;
  html: string;
  text: string;
}

// html-to-text capitalises headings by default; the text part should read like the HTML one.
const plainTextOptions = {
  plainText: true,
  htmlToTextOptions: {
    selectors: ['h1', 'h2', 'h3'].map((selector) => ({ selector, options: { uppercase: false } })),
  },
} as const;

export function webUrlFor(recap: Pick<Recap, 'path'>, siteUrl: string): string {
  return `${siteUrl.replace(/\/+$/, '')}${recap.path}`;
}

export async function renderDigestEmail(props: WeeklyDigestEmailProps): Promise<RenderedEmail> {
  const element = createElement(WeeklyDigestEmail, props);
  const [html, text] = await Promise.all([render(element), render(element, plainTextOptions)]);
  return { subject: digestSubject(props.recap), html, text };
}

// Letters only: survives HTML escaping and text conversion unchanged, and no real link contains it.
const MARKER_URL = 'https://unsubscribe.invalid/LWDIGESTUNSUBSCRIBEMARKER';

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export interface PreparedDigest {
  recap: Recap;
  subject: string;
  webUrl: string;
  /** This subscriber's copy: the rendered template with their unsubscribe link in place. */
  personalize(unsubscribeUrl: string): RenderedEmail;
}

export async function prepareDigest(recap: Recap, siteUrl: string): Promise<PreparedDigest> {
  const webUrl = webUrlFor(recap, siteUrl);
  const template = await renderDigestEmail({ recap, webUrl, siteUrl, unsubscribeUrl: MARKER_URL });
  if (!template.html.includes(MARKER_URL) || !template.text.includes(MARKER_URL)) {
    throw new Error('The digest template lost its unsubscribe link: both parts must contain it.');
  }
  const htmlParts = template.html.split(MARKER_URL);
  const textParts = template.text.split(MARKER_URL);
  return {
    recap,
    subject: template.subject,
    webUrl,
    personalize(unsubscribeUrl) {
      return { subject: template.subject, html: htmlParts.join(escapeAttribute(unsubscribeUrl)), text: textParts.join(unsubscribeUrl) };
    },
  };
}
