// The Monday e-mail as subscribers get it, for every recap: all ten entries linked through the
// site's /go/ links, which lead to the launches with campaign parameters, the web version, the unsubscribe link, a plain-text part that says the same, and a size under
// Gmail's clipping limit.
import { describe, expect, it } from 'vitest';
import { formatWeekDate } from '../../../content/dates.ts';
import { recaps } from '../../../content/index.ts';
import { goDestination, goUrlFor } from '../../../content/go-links.ts';
import { site, withCampaign } from '../../../content/site.ts';
import { createUnsubscribeToken, unsubscribeUrlFor } from '../../subscribers/signed-links.ts';
import { plainTextSpelling, prepareDigest, renderDigestEmail, toLatin1Html, webUrlFor } from './render-digest.ts';
import { weekTitle } from '../../../content/text.ts';
import { WeeklyDigestEmail } from './WeeklyDigestEmail.tsx';

const SITE_URL = 'https://launchedweekly.com';
const GMAIL_CLIP_BYTES = 102 * 1024;
const unsubscribeUrl = unsubscribeUrlFor(SITE_URL, createUnsubscribeToken('5b0e6c1e-0000-4000-8000-000000000001', 'x'.repeat(40)));

const escapeRegExp = (value: string) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const attr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;');
const textOf = (value: string) => toLatin1Html(value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/'/g, '&#x27;').replace(/"/g, '&quot;'));

const rendered = await Promise.all(
  recaps.map(async (recap) => ({
    recap,
    email: await renderDigestEmail({ recap, webUrl: webUrlFor(recap, SITE_URL), siteUrl: SITE_URL, unsubscribeUrl }),
  })),
);

describe.each(rendered.map(({ recap, email }) => [recap.date, recap, email] as const))('the e-mail for %s', (_date, recap, email) => {
  const placement = { medium: 'email', week: recap.date } as const;

  it('opens with the week, the headline and the intro, and is titled by them', () => {
    expect(email.subject).toBe(`Week of ${formatWeekDate(recap.date)}: ${recap.headline}`);
    expect(email.html).toContain(`Week of ${formatWeekDate(recap.date)}`);
    expect(email.html).toContain(textOf(recap.headline));
    expect(email.html).toContain(textOf(recap.intro));
    expect(email.html).toMatch(/<html[^>]* lang="en"/);
    // The inbox preview line, hidden in the body and left out of the plain-text part.
    expect(email.html).toMatch(new RegExp(`<div style="display:none[^"]*" data-skip-in-text="true">${escapeRegExp(textOf(`${recap.headline} — ${recap.title}`))}`));
    expect(email.text).not.toContain(plainTextSpelling(`${recap.headline} — ${recap.title}`));
  });

  it('lists all ten entries: rank, name linked through /go/ to the launch with campaign parameters, tagline, upvotes, editor’s note', () => {
    for (const entry of recap.entries) {
      const href = goUrlFor(SITE_URL, recap, entry.rank);
      expect(href).toBe(`${SITE_URL}/go${recap.path}/${entry.rank}`);
      expect(goDestination(recap, String(entry.rank), SITE_URL)).toBe(withCampaign(entry.url, placement));
      expect(withCampaign(entry.url, placement)).toContain('utm_source=launched-weekly&utm_medium=email&utm_campaign=weekly-recap-' + recap.date);
      expect(email.html).toMatch(new RegExp(`href="${escapeRegExp(attr(href))}"[^>]*>${escapeRegExp(textOf(entry.name))}</a>`));
      expect(email.html).toContain(`#<!-- -->${entry.rank}`);
      expect(email.html).toContain(textOf(entry.tagline));
      expect(email.html).toContain(`>${site.recap.upvotes(entry.upvotes)}</p>`);
      expect(email.html).toContain(textOf(entry.note));
    }
    expect(email.html.split(textOf(site.recap.editorsNote)).length - 1).toBe(10);
  });

  it('links the web version of the recap through /go/ (leading to it with campaign parameters), and the unsubscribe link untagged', () => {
    expect(email.html).toContain(`href="${attr(goUrlFor(SITE_URL, recap, 'page'))}"`);
    expect(goDestination(recap, 'page', SITE_URL)).toBe(withCampaign(`${SITE_URL}${recap.path}`, placement));
    expect(email.html).toContain(`href="${attr(unsubscribeUrl)}"`);
    expect(email.html).toContain('because you signed up for the Launched Weekly newsletter');
  });

  it('has a plain-text part with every entry, the links and the unsubscribe address', () => {
    for (const entry of recap.entries) {
      expect(email.text).toContain(plainTextSpelling(`#${entry.rank} ${entry.name} ${goUrlFor(SITE_URL, recap, entry.rank)}`));
      expect(email.text).toContain(plainTextSpelling(entry.tagline));
      expect(email.text).toContain(site.recap.upvotes(entry.upvotes));
      expect(email.text).toContain(plainTextSpelling(entry.note));
    }
    expect(email.text).toContain(goUrlFor(SITE_URL, recap, 'page'));
    expect(email.text).toContain(unsubscribeUrl);
    expect(email.text).not.toMatch(/<[a-z]/i);
  });

  it('stays under Gmail’s ~102 KB clipping size, loads nothing from elsewhere and runs no script', () => {
    expect(Buffer.byteLength(email.html)).toBeLessThan(GMAIL_CLIP_BYTES);
    expect(email.html).not.toMatch(/<script|<link|@import|@font-face|<img/i);
    expect(email.html).toContain('max-width:600px');
    // One-byte characters only, so a batch of copies serialises on V8's fast path (render-digest.ts).
    expect(email.html).not.toMatch(/[\u0100-\u{10ffff}]/u);
    expect(email.text).not.toMatch(/[\u0100-\u{10ffff}]/u);
    expect(email.html).toContain('width:100%');
  });
});

describe('the rendered digest', () => {
  it('is under the clipping size with room to spare even for the longest recap', () => {
    const sizes = rendered.map(({ recap, email }) => ({ date: recap.date, bytes: Buffer.byteLength(email.html) }));
    const longest = sizes.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    expect(longest.bytes).toBeLessThan(GMAIL_CLIP_BYTES / 2);
  });

  it('personalises one render per recap into exactly what a full render per subscriber gives', async () => {
    const recap = recaps[0]!;
    const prepared = await prepareDigest(recap, SITE_URL);
    for (const id of ['a1', '5b0e6c1e-0000-4000-8000-00000000abcd']) {
      const url = unsubscribeUrlFor(SITE_URL, createUnsubscribeToken(id, 'y'.repeat(40)));
      const direct = await renderDigestEmail({ recap, webUrl: webUrlFor(recap, SITE_URL), siteUrl: SITE_URL, unsubscribeUrl: url });
      expect(prepared.personalize(url)).toEqual(direct);
    }
    expect(prepared.subject).toBe(weekTitle(recap));
  });

  it('has PreviewProps from a real recap', () => {
    expect(WeeklyDigestEmail.PreviewProps.recap).toBe(recaps[0]);
  });
});
