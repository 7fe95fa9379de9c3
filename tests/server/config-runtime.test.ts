// SITE_URL is kept as its origin, so whatever else an operator pastes into it (a path, a query,
// a tab or newline from a copied line) never reaches a link or a List-Unsubscribe header; and a
// production server without the webhook secret says at start-up what it will not do.
import { describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { prepareDigest } from '../../server/mail/templates/render-digest.ts';
import { parseConfig } from '../../server/config.ts';
import { createUnsubscribeToken, unsubscribeUrlFor } from '../../server/subscribers/signed-links.ts';

const parse = (env: Record<string, string | undefined>) => parseConfig(env, async () => 'generated-development-secret-0123456789abcdef');

const PRODUCTION: Record<string, string> = {
  NODE_ENV: 'production',
  SITE_URL: 'https://launchedweekly.com',
  UNSUBSCRIBE_SECRET: 'a'.repeat(64),
  MAIL_FROM: 'Launched Weekly <digest@launchedweekly.com>',
  RESEND_API_KEY: 're_live_123',
  RESEND_WEBHOOK_SECRET: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  DATABASE_URL: 'postgres://app:pw@db.example.com:5432/launched',
};

describe('SITE_URL is stored as its origin', () => {
  it.each([
    ['https://launchedweekly.com', 'https://launchedweekly.com'],
    ['https://launchedweekly.com/', 'https://launchedweekly.com'],
    ['https://LaunchedWeekly.COM:443/', 'https://launchedweekly.com'],
    ['https://launchedweekly.com:8443/', 'https://launchedweekly.com:8443'],
    ['http://127.0.0.1:3000', 'http://127.0.0.1:3000'],
    ['https://launchedweekly.com/newsletter/?utm_source=x#top', 'https://launchedweekly.com'],
    ['https://launched\tweekly.com/\n', 'https://launchedweekly.com'],
    ['  https://launchedweekly.com/\r\n', 'https://launchedweekly.com'],
    ['https://editor:hunter2@launchedweekly.com/', 'https://launchedweekly.com'],
  ])('%j → %s', async (value, origin) => {
    expect((await parse({ ...PRODUCTION, SITE_URL: value })).siteUrl).toBe(origin);
  });

  it('says once at start-up that the rest was dropped, without repeating the value', async () => {
    const config = await parse({ ...PRODUCTION, SITE_URL: 'https://editor:hunter2@launchedweekly.com/newsletter?x=1' });
    expect(config.warnings).toEqual([expect.stringMatching(/^SITE_URL: only its origin https:\/\/launchedweekly\.com is used for links/)]);
    expect(config.warnings.join('\n')).not.toMatch(/hunter2|newsletter/);
    expect((await parse(PRODUCTION)).warnings).toEqual([]);
  });

  it('the unsubscribe link, the List-Unsubscribe target and the e-mail links hold only the origin and their own path', async () => {
    const { siteUrl } = await parse({ ...PRODUCTION, SITE_URL: 'https://launchedweekly.com/weekly?ref=mail\t#x' });
    const token = createUnsubscribeToken('subscriber-1', PRODUCTION.UNSUBSCRIBE_SECRET!);
    const unsubscribe = unsubscribeUrlFor(siteUrl, token);
    expect(unsubscribe).toBe(`https://launchedweekly.com/unsubscribe?token=${encodeURIComponent(token)}`);

    const recap = recaps[0]!;
    const digest = await prepareDigest(recap, siteUrl);
    expect(digest.webUrl).toBe(`https://launchedweekly.com${recap.path}`);
    const copy = digest.personalize(unsubscribe);
    const links = [...copy.html.matchAll(/href="([^"]+)"/g)].map((match) => match[1]!.replaceAll('&amp;', '&'));
    expect(links.filter((link) => link.includes('launchedweekly.com'))).not.toEqual([]);
    for (const link of links.filter((l) => l.includes('launchedweekly.com'))) {
      expect(link, link).toMatch(/^https:\/\/launchedweekly\.com\/(?!weekly\?ref)/);
      expect(link).not.toMatch(/[\t\n\r]|ref=mail/);
    }
    expect(copy.text).not.toMatch(/ref=mail|launchedweekly\.com\/weekly\?/);
  });
});

describe('RESEND_WEBHOOK_SECRET', () => {
  it('missing in production: a start-up warning that bounces and complaints will not be processed', async () => {
    const config = await parse({ ...PRODUCTION, RESEND_WEBHOOK_SECRET: undefined });
    expect(config.warnings).toEqual([expect.stringMatching(/^RESEND_WEBHOOK_SECRET is not set: bounces and complaints will not be processed/)]);
  });

  it('missing in development: nothing to warn about (the outbox has no webhooks)', async () => {
    expect((await parse({})).warnings).toEqual([]);
  });
});
