// One mailbox rule, written in TypeScript (server/subscribers/mailbox-key.ts: NFKC, IDNA, + tags,
// Gmail dots and googlemail) and applied by the database to every stored address (SQL
// public.mailbox_key, the generated column that keeps one row per mailbox). The two must agree on
// every address the server can store, or one mailbox could hold two rows while the limits and
// the suppression list count it as one. Checked over a generated corpus: Unicode local parts,
// international domains (typed or already in ASCII), full-width forms, case, dots, + and -
// tags, Fastmail's sub-domain addresses, Gmail and googlemail.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalAddress, mailboxKey } from '../../server/subscribers/mailbox-key.ts';
import type { OpenedSqlBackend } from '../support/sql-backends.ts';
import { modelStores } from '../subscriber-model/stores.ts';

const localChar = fc.constantFrom(
  ...'abcxyzABCXYZ0189',
  '.', '.', '+', '+', '-', '_',
  'é', 'É', 'ß', 'ø', 'İ', 'ı', 'ǅ', 'ﬁ', 'ａ', 'Ｚ', '１', 'ä', 'ο', 'Σ', 'ς', 'и', 'Я', '漢', 'ー',
);
const domain = fc.constantFrom(
  'gmail.com', 'googlemail.com', 'GMail.com', 'GOOGLEMAIL.COM', 'ｇｍａｉｌ.ｃｏｍ',
  'fastmail.com', 'reader.fastmail.com', 'Reader.FastMail.com', 'sub.reader.fastmail.fm',
  'example.org', 'Example.ORG', 'ｅｘａｍｐｌｅ.ｏｒｇ', 'corp-mail.example',
  'bücher.example', 'BÜCHER.example', 'xn--bcher-kva.example', 'münchen.de', '例え.jp', 'παράδειγμα.δοκιμή', 'пример.рф',
  'sub.gmail.com', 'gmail.com.evil.example',
);
const address = fc
  .tuple(fc.array(localChar, { minLength: 1, maxLength: 12 }), fc.constantFrom('', ' ', '\t'), domain, fc.constantFrom('', ' ', '\n'))
  .map(([local, before, host, after]) => `${before}${local.join('')}@${host}${after}`);

for (const database of modelStores) describe.skipIf(!database.available)(`the mailbox rule in SQL (${database.name}) and TypeScript`, () => {
  let opened: OpenedSqlBackend;
  beforeAll(async () => {
    opened = await database.open();
  });
  afterAll(async () => {
    await opened?.cleanup();
  });

  const sqlKeys = async (emails: readonly string[]) =>
    (await opened.sql.query<{ key: string }>('select public.mailbox_key(a) as key from unnest($1::text[]) with ordinality as t(a, n) order by n', [emails])).rows.map((r) => r.key);

  it('gives every address the server stores the mailbox key the server counts it by', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(address, { minLength: 1, maxLength: 50 }), async (typed) => {
        const stored = typed.map((raw) => canonicalAddress(raw)).filter((c) => c.ok).map((c) => c.email);
        expect(await sqlKeys(stored)).toEqual(stored.map((email) => mailboxKey(email)));
        // The key of a typed spelling is the key of what is stored for it.
        for (const raw of typed) {
          const canonical = canonicalAddress(raw);
          if (canonical.ok) expect(mailboxKey(canonical.email), raw).toBe(mailboxKey(raw));
        }
      }),
      { numRuns: 200 },
    );
  });

  it('agrees on an address as a provider reports it (ASCII, any case, padded)', async () => {
    const reported = fc.tuple(fc.array(fc.constantFrom(...'abcXYZ09.+-_'), { minLength: 1, maxLength: 10 }), domain.filter((d) => /^[\x20-\x7e]+$/.test(d)), fc.constantFrom('', ' '))
      .map(([local, host, pad]) => `${pad}${local.join('')}@${host}${pad}`);
    await fc.assert(
      fc.asyncProperty(fc.array(reported, { minLength: 1, maxLength: 50 }), async (emails) => {
        expect(await sqlKeys(emails)).toEqual(emails.map((email) => mailboxKey(email)));
      }),
      { numRuns: 100 },
    );
  });
});
