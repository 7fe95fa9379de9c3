import { describe, expect, it } from 'vitest';
import { emailProblem, looksLikeEmail, normalizeEmail } from './email-address.ts';

describe('the browser’s quick check (seed §5)', () => {
  it.each([
    ['', false],
    ['   ', false],
    ['no-at-sign', false],
    ['a@b', true],
    [' Reader@Example.com ', true],
  ])('%j → %s', (input, expected) => expect(looksLikeEmail(input)).toBe(expected));
});

describe('the server’s check of a normalised address', () => {
  it('trims and lower-cases before saving', () => {
    expect(normalizeEmail('  Reader.Name+news@Example.COM ')).toBe('reader.name+news@example.com');
  });

  it.each(['reader@example.com', 'first.last+tag@sub.example.co.uk', "o'brien@example.ie", 'user@bücher.de', 'x@xn--bcher-kva.de'])('accepts %s', (email) => {
    expect(emailProblem(email)).toBeNull();
  });

  it.each([
    ['', /enter your email/],
    ['a@b', /valid domain/],
    ['a@@example.com', /exactly one @/],
    ['a b@example.com', /spaces or control characters/],
    ['a@example.com\r\nbcc:x@evil.com', /spaces or control characters/],
    ['a\u0000@example.com', /control characters/],
    ['.a@example.com', /before the @/],
    ['a..b@example.com', /before the @/],
    ['<script>@example.com', /before the @/],
    ['a@-example.com', /valid domain/],
    ['a@example.c', /valid domain/],
    [`${'a'.repeat(65)}@example.com`, /before the @/],
    [`a@${'b'.repeat(250)}.com`, /at most 254/],
  ])('rejects %j with a reason', (email, reason) => {
    expect(emailProblem(email)).toMatch(reason);
  });
});
