// Confirmation tokens (double opt-in): signed, naming the record and its link version, valid for 7
// days, and not interchangeable with unsubscribe tokens made with the same secret.
import { describe, expect, it } from 'vitest';
import { CONFIRM_TOKEN_DAYS, createConfirmToken, createUnsubscribeToken, verifyConfirmToken, verifyUnsubscribeToken } from '../../server/subscribers/signed-links.ts';

const SECRET = 'confirm-token-secret-0123456789abcdef012345';
const OLD_SECRET = 'confirm-token-old-secret-0123456789abcdef01';
const ID = '5b0e6c1e-aaaa-4000-8000-000000000001';
const DAY = 24 * 60 * 60 * 1000;

describe('confirmation tokens', () => {
  const issued = new Date('2026-03-02T10:00:00Z');
  const token = createConfirmToken(ID, issued, SECRET);

  it('name the record and hold for 7 days, then say they expired', () => {
    expect(CONFIRM_TOKEN_DAYS).toBe(7);
    expect(token).not.toContain('@');
    expect(verifyConfirmToken(token, new Date(issued.getTime() + 7 * DAY - 1000), SECRET)).toEqual({ ok: true, subscriberId: ID });
    expect(verifyConfirmToken(token, new Date(issued.getTime() + 7 * DAY + 1000), SECRET)).toEqual({ ok: false, reason: 'expired' });
  });

  it('are refused when altered, truncated, signed with another secret, or made for unsubscribing', () => {
    const now = new Date(issued.getTime() + DAY);
    const [id, time, mac] = token.split('.') as [string, string, string];
    const laterTime = (parseInt(time, 36) + 86_400).toString(36);
    for (const bad of [
      `${id}.${laterTime}.${mac}`,
      `${Buffer.from('another-id').toString('base64url')}.${time}.${mac}`,
      token.slice(0, -1),
      `${id}.${time}`,
      createConfirmToken(ID, issued, 'another-secret-0123456789abcdef0123456789'),
      createUnsubscribeToken(ID, SECRET),
      '',
      'x'.repeat(600),
    ]) {
      expect(verifyConfirmToken(bad, now, SECRET), bad).toEqual({ ok: false, reason: 'invalid' });
    }
    // And the other way round: a confirmation link does not unsubscribe anyone.
    expect(verifyUnsubscribeToken(token, SECRET)).toBeNull();
  });

  it('made before a rotation of UNSUBSCRIBE_SECRET still work with the previous secret configured', () => {
    const before = createConfirmToken(ID, issued, OLD_SECRET);
    const now = new Date(issued.getTime() + DAY);
    expect(verifyConfirmToken(before, now, SECRET)).toEqual({ ok: false, reason: 'invalid' });
    expect(verifyConfirmToken(before, now, SECRET, [OLD_SECRET])).toEqual({ ok: true, subscriberId: ID });
  });

  it('carry the link version they were mailed with, which no edit can change', () => {
    const now = new Date(issued.getTime() + DAY);
    const versioned = createConfirmToken(ID, issued, SECRET, 37);
    expect(verifyConfirmToken(versioned, now, SECRET)).toEqual({ ok: true, subscriberId: ID, version: 37 });
    const [id, time, version, mac] = versioned.split('.') as [string, string, string, string];
    expect(version).toBe((37).toString(36));
    for (const bad of [
      `${id}.${time}.${(38).toString(36)}.${mac}`,
      `${id}.${time}.0${version}.${mac}`,
      // The same MAC without the version: a link mailed before versions is signed differently.
      `${id}.${time}.${mac}`,
      `${id}.${time}.${version}.${version}.${mac}`,
    ]) {
      expect(verifyConfirmToken(bad, now, SECRET), bad).toEqual({ ok: false, reason: 'invalid' });
    }
    // A link mailed before versions verifies with none, for the database to judge (pending rows only).
    expect(verifyConfirmToken(token, now, SECRET)).toEqual({ ok: true, subscriberId: ID });
    expect(verifyConfirmToken(createConfirmToken(ID, new Date(issued.getTime() - 8 * DAY), SECRET, 37), now, SECRET)).toEqual({ ok: false, reason: 'expired' });
  });
});
