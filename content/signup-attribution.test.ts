import { describe, expect, it } from 'vitest';
import { attributionFromQuery, attributionQuery, carriedAttribution, landingPath, landingToken, MAX_ATTRIBUTION_LENGTH, normalizeAttributionValue } from './signup-attribution.ts';

describe('normalizeAttributionValue', () => {
  it('keeps a short token, lower-cased and trimmed', () => {
    expect(normalizeAttributionValue(' Newsletter-X ')).toBe('newsletter-x');
    expect(normalizeAttributionValue('launch_2026.q1')).toBe('launch_2026.q1');
    expect(normalizeAttributionValue('a'.repeat(MAX_ATTRIBUTION_LENGTH))).toBe('a'.repeat(MAX_ATTRIBUTION_LENGTH));
  });

  it('drops rather than repairs anything else: markup, spaces, non-ASCII, oversized, empty, non-strings', () => {
    for (const raw of ['<script>alert(1)</script>', 'two words', 'newsletter x', 'café', 'a'.repeat(MAX_ATTRIBUTION_LENGTH + 1), '', '   ', 'a&b=c', 'x"y', undefined, 42, ['x']]) {
      expect(normalizeAttributionValue(raw)).toBeUndefined();
    }
  });
});

describe('attributionFromQuery', () => {
  it('reads the origin parameters from the browser and from Express alike, ignoring every other one', () => {
    const search = new URLSearchParams('?utm_source=Newsletter-X&utm_medium=email&utm_campaign=july&ref=abc123&q=hello&utm_term=x');
    const expected = { utm_source: 'newsletter-x', utm_medium: 'email', utm_campaign: 'july', ref: 'abc123' };
    expect(attributionFromQuery(search)).toEqual(expected);
    expect(attributionFromQuery({ utm_source: 'Newsletter-X', utm_medium: 'email', utm_campaign: 'july', ref: 'abc123', q: 'hello' })).toEqual(expected);
  });

  it('takes the first of a repeated parameter, as URLSearchParams.get does, and drops bad values one by one', () => {
    expect(attributionFromQuery({ utm_source: ['first', 'second'], utm_medium: 'x'.repeat(200), ref: { nested: 'object' } })).toEqual({ utm_source: 'first' });
    expect(attributionFromQuery(new URLSearchParams('utm_source=first&utm_source=second&utm_campaign=%3Cb%3E'))).toEqual({ utm_source: 'first' });
  });
});

describe('attributionQuery', () => {
  it('is empty without attribution, so a plain visit renders the same links as before', () => {
    expect(attributionQuery({})).toBe('');
  });

  it('writes the parameters in one fixed order, and round-trips through attributionFromQuery', () => {
    const attribution = { utm_campaign: 'july', ref: 'abc123', utm_source: 'newsletter-x' };
    const query = attributionQuery(attribution);
    expect(query).toBe('?ref=abc123&utm_source=newsletter-x&utm_campaign=july');
    expect(attributionFromQuery(new URLSearchParams(query))).toEqual(attribution);
  });

  it('never writes a value that is not a token, even when handed one directly', () => {
    expect(attributionQuery({ utm_source: 'a b<c>', utm_medium: 'Email' })).toBe('?utm_medium=email');
  });
});

describe('carriedAttribution', () => {
  it('adds the page a visit with an origin landed on, and keeps a landing page carried from earlier', () => {
    expect(carriedAttribution(new URLSearchParams('utm_source=newsletter-x'), '/weekly-recap-july-14')).toEqual({ utm_source: 'newsletter-x', landing: 'weekly-recap-july-14' });
    expect(carriedAttribution(new URLSearchParams('share=0123456789abcdef'), '/')).toEqual({ share: '0123456789abcdef', landing: 'home' });
    expect(carriedAttribution(new URLSearchParams('utm_source=x&landing=about'), '/archive')).toEqual({ utm_source: 'x', landing: 'about' });
  });

  it('carries nothing for a visit without an origin', () => {
    expect(carriedAttribution(new URLSearchParams('q=agents'), '/archive')).toEqual({});
  });

  it('names pages by tokens that map back to their paths', () => {
    for (const path of ['/', '/archive', '/about', '/weekly-recap-july-14']) expect(landingPath(landingToken(path)!)).toBe(path);
  });
});
