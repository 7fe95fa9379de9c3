// The database's mailbox key (supabase/migrations/20261128001020_one_row_per_mailbox.sql, which
// keeps one row per mailbox) is the server's (server/subscribers/mailbox-key.ts, which counts the limits and
// keys the suppression list's hashes) for every stored address: if they ever differed, two rows
// could hold one mailbox, or one spelling could be refused for another mailbox.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalAddress, mailboxKey } from '../../server/subscribers/mailbox-key.ts';
import { loadMigrations } from '../../server/store/migrate.ts';
import { seedImage } from '../../server/store/pglite.ts';

const SPELLINGS = [
  'victim@gmail.com',
  'v.i.c.t.i.m@gmail.com',
  'Victim+2@Gmail.com',
  'victim@googlemail.com',
  'v.ictim+4@googlemail.com',
  'VICTIM+5@GMAIL.COM',
  'reader+news@example.org',
  'Reader+x@Example.org',
  'first.last@example.org',
  '+tag@example.org',
  'a+b+c@example.org',
  'dots.stay@notgmail.com',
  'quoted"at"@example.org',
  'x@sub.gmail.com',
  'ünïcode+tag@bücher.example',
  'wide@ｅｘａｍｐｌｅ.ｏｒｇ',
  'no-at-sign',
];

describe('the mailbox key in SQL', () => {
  let db: PGlite;

  beforeAll(async () => {
    const migrations = await loadMigrations();
    // The build's image spares PGlite's initdb when there is one; the function is defined again
    // below from the migration's own text either way.
    db = new PGlite({ loadDataDir: await seedImage(migrations) });
    const migration = migrations.find((m) => m.version === '20261128001020')!;
    // Only the function: it depends on nothing else.
    const definition = /create or replace function public\.mailbox_key[\s\S]*?\n\$\$;/.exec(migration.sql)![0];
    await db.exec(definition);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('is the server’s mailboxKey for every stored spelling', async () => {
    const stored = SPELLINGS.map((raw) => {
      const canonical = canonicalAddress(raw);
      return canonical.ok ? canonical.email : raw;
    });
    const result = await db.query<{ key: string }>('select public.mailbox_key(a) as key from unnest($1::text[]) with ordinality as t(a, n) order by n', [stored]);
    expect(result.rows.map((row) => row.key)).toEqual(stored.map(mailboxKey));
  });
});
