import { describe, expect, it } from 'vitest';
import { createConfirmToken, createUnsubscribeToken } from '../subscribers/signed-links.ts';
import { createPreviewToken, verifyPreviewToken } from './preview-token.ts';

const SECRET = 'preview-token-test-secret-0123456789abcdef';
const now = new Date('2026-11-27T16:00:00Z');

describe('preview tokens', () => {
  it('name their week for 7 days and no longer', () => {
    const token = createPreviewToken('2026-11-30', now, SECRET);
    expect(verifyPreviewToken(token, now, SECRET)).toEqual({ ok: true, week: '2026-11-30', expiresAt: new Date('2026-12-04T16:00:00Z') });
    expect(verifyPreviewToken(token, new Date('2026-12-04T15:59:59Z'), SECRET)).toMatchObject({ ok: true });
    expect(verifyPreviewToken(token, new Date('2026-12-04T16:00:00Z'), SECRET)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuse any change: another week, a later expiry, another secret, a cut or a flipped character', () => {
    const token = createPreviewToken('2026-11-30', now, SECRET);
    const [week, expires, mac] = token.split('.') as [string, string, string];
    const altered = [
      `2026-12-07.${expires}.${mac}`,
      `${week}.${(parseInt(expires, 36) + 86_400).toString(36)}.${mac}`,
      `${week}.${expires}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`,
      token.slice(0, -2),
      `${token}x`,
      '',
      createPreviewToken('2026-11-30', now, `${SECRET}-other`),
    ];
    for (const bad of altered) expect(verifyPreviewToken(bad, now, SECRET), bad).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyPreviewToken(['a'], now, SECRET)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('never accepts another kind of token of the same secret', () => {
    expect(verifyPreviewToken(createUnsubscribeToken('2026-11-30', SECRET), now, SECRET)).toMatchObject({ ok: false });
    expect(verifyPreviewToken(createConfirmToken('2026-11-30', now, SECRET), now, SECRET)).toMatchObject({ ok: false });
  });
});
