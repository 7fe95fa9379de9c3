import { describe, expect, it } from 'vitest';
import { campaignFor, withCampaign } from './site.ts';

describe('campaign parameters on outbound links', () => {
  it('tag site pages with medium "site" and campaign "weekly-recap"', () => {
    const url = new URL(withCampaign('https://launched.lovable.app', { medium: 'site' }));
    expect(Object.fromEntries(url.searchParams)).toEqual({ utm_source: 'launched-weekly', utm_medium: 'site', utm_campaign: 'weekly-recap' });
  });

  it('name the week on recap pages and in e-mails', () => {
    expect(campaignFor({ medium: 'recap', week: '2025-07-14' })).toEqual({ source: 'launched-weekly', medium: 'recap', campaign: 'weekly-recap-2025-07-14' });
    expect(campaignFor({ medium: 'email', week: '2025-07-14' }).medium).toBe('email');
  });

  it('keep the link’s own path, query and fragment, and replace stale campaign values', () => {
    const tagged = withCampaign('https://launched.lovable.app/products/tallyfern?ref=a&utm_source=old#reviews', { medium: 'recap', week: '2025-02-02' });
    const url = new URL(tagged);
    expect(url.pathname).toBe('/products/tallyfern');
    expect(url.hash).toBe('#reviews');
    expect(url.searchParams.get('ref')).toBe('a');
    expect(url.searchParams.getAll('utm_source')).toEqual(['launched-weekly']);
  });
});
