import { describe, expect, it } from 'vitest';
import { emailProblem } from '../../content/email-address.ts';
import { canonicalAddress, mailboxKey, NON_ASCII_DOMAIN_MESSAGE } from './mailbox-key.ts';

describe('mailboxKey', () => {
  it('gives every spelling of one Gmail mailbox the same key', () => {
    const spellings = [
      'victim@gmail.com',
      'Victim@Gmail.com',
      'v.i.c.t.i.m@gmail.com',
      'vic.tim+1@gmail.com',
      'victim+news@googlemail.com',
      ' VICTIM@GOOGLEMAIL.COM ',
      'v.ictim+a+b@gmail.com',
      'victim+8@gmail.com',
      'vi.ct.im@googlemail.com',
      'ｖｉｃｔｉｍ＠ｇｍａｉｌ．ｃｏｍ',
    ];
    expect(new Set(spellings.map(mailboxKey))).toEqual(new Set(['victim@gmail.com']));
  });

  it('drops the +tag everywhere but keeps dots and the domain elsewhere', () => {
    expect(mailboxKey('Reader.Name+news@Example.org')).toBe('reader.name@example.org');
    expect(mailboxKey('reader.name@example.org')).not.toBe(mailboxKey('readername@example.org'));
    expect(mailboxKey('reader@googlemail.example')).toBe('reader@googlemail.example');
    // Only a tag is not the empty mailbox.
    expect(mailboxKey('+news@example.org')).toBe('+news@example.org');
  });
});

describe('canonicalAddress', () => {
  it('writes a full-width or international domain in ASCII and keeps the local part as typed', () => {
    expect(canonicalAddress('  Reader+News@ｅｘａｍｐｌｅ.ｏｒｇ ')).toEqual({ ok: true, email: 'reader+news@example.org' });
    expect(canonicalAddress('leser@Bücher.example')).toEqual({ ok: true, email: 'leser@xn--bcher-kva.example' });
    expect(canonicalAddress('reader@example.com')).toEqual({ ok: true, email: 'reader@example.com' });
    const stored = canonicalAddress('leser@bücher.example');
    expect(stored.ok && emailProblem(stored.email)).toBeNull();
  });

  it('refuses a domain that cannot be written in ASCII', () => {
    expect(canonicalAddress('reader@exa\u200bmple.org\u0378')).toEqual({ ok: false, message: NON_ASCII_DOMAIN_MESSAGE });
  });
});

describe('canonicalAddress, domains IDNA would quietly change', () => {
  it('refuses a zero-width space, an emoji or a direction mark in the domain instead of dropping or encoding it', () => {
    for (const email of ['reader@exa\u200bmple.com', 'reader@😀.com', 'reader@\u202emoc.elpmaxe']) {
      expect(canonicalAddress(email), email).toEqual({ ok: false, message: NON_ASCII_DOMAIN_MESSAGE });
    }
  });
});
