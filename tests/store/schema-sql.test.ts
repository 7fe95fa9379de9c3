// supabase/schema.sql is where a reader finds each SQL function's current body; the migrations
// are the history that makes it. This keeps the two equal: a database migrated from scratch is
// dumped the way `npm run db:schema` dumps it, and every function (then everything else) must be
// in the committed file exactly as the migrations leave it.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { normaliseDump, SCHEMA_FILE, schemaOfMigrations } from '../../scripts/dump-schema.ts';
import { createTestDatabase, postgresUrl } from '../support/postgres.ts';

const RUN = 'Run `npm run db:schema` and commit supabase/schema.sql.';

/** The dump's objects by pg_dump's own header ("-- Name: N; Type: T; Schema: …"), keyed "T N". */
function entries(schema: string): Map<string, string> {
  const parts = schema.split(/^--\n-- Name: /m).slice(1);
  return new Map(
    parts.map((part) => {
      const [, name = '', type = ''] = /^(.*?); Type: (.*?); Schema:/.exec(part) ?? [];
      return [`${type} ${name}`, part.trim()];
    }),
  );
}

/** One line per SQL function that is missing from `committed`, differs from `made`, or is no longer made. */
function functionProblems(committed: string, made: string): string[] {
  const isFunction = (key: string) => key.startsWith('FUNCTION ');
  const want = entries(made);
  const have = entries(committed);
  const problems: string[] = [];
  for (const [key, text] of want) {
    if (!isFunction(key)) continue;
    if (!have.has(key)) problems.push(`${key} is missing from supabase/schema.sql`);
    else if (have.get(key) !== text) problems.push(`${key} in supabase/schema.sql differs from what the migrations make`);
  }
  for (const key of have.keys()) {
    if (isFunction(key) && !want.has(key)) problems.push(`${key} is in supabase/schema.sql but the migrations no longer make it`);
  }
  return problems;
}

const FUNCTION = (body: string) => `--
-- Name: digest_lock(integer); Type: FUNCTION; Schema: public; Owner: -
--

CREATE FUNCTION public.digest_lock(p integer) RETURNS integer
    LANGUAGE sql
    AS $$ select ${body} $$;
`;

describe('checking supabase/schema.sql against the migrations', () => {
  const made = normaliseDump(FUNCTION('p + 1'));

  it('names a function whose body differs, one that is missing, and one the migrations dropped', () => {
    expect(functionProblems(normaliseDump(FUNCTION('p + 2')), made)).toEqual([
      'FUNCTION digest_lock(integer) in supabase/schema.sql differs from what the migrations make',
    ]);
    expect(functionProblems(normaliseDump(''), made)).toEqual(['FUNCTION digest_lock(integer) is missing from supabase/schema.sql']);
    expect(functionProblems(made, normaliseDump(''))).toEqual([
      'FUNCTION digest_lock(integer) is in supabase/schema.sql but the migrations no longer make it',
    ]);
    expect(functionProblems(made, made)).toEqual([]);
  });

  it("drops pg_dump's version banner, session settings and random \\restrict key", () => {
    const dump = (version: string, key: string) =>
      `-- Dumped from database version ${version}\n\\restrict ${key}\nSET lock_timeout = 0;\n\n\n${FUNCTION('p + 1')}\\unrestrict ${key}\n`;
    expect(normaliseDump(dump('15.14', 'aaa'))).toBe(normaliseDump(dump('15.18', 'bbb')));
    expect(normaliseDump(dump('15.14', 'aaa'))).toBe(made);
  });
});

describe.skipIf(!postgresUrl)('supabase/schema.sql', () => {
  it('holds every SQL function, and the rest of the schema, exactly as the migrations make them', async () => {
    const db = await createTestDatabase({ from: 'empty' });
    try {
      const fromMigrations = await schemaOfMigrations(db.url);
      const committed = await readFile(SCHEMA_FILE, 'utf8').catch(() => '');
      const problems = functionProblems(committed, fromMigrations);
      expect(problems, `${problems.join('\n')}\n${RUN}`).toEqual([]);
      expect(committed === fromMigrations, `supabase/schema.sql differs from the schema the migrations make (a table, index, trigger, policy or grant). ${RUN}`).toBe(true);
    } finally {
      await db.drop();
    }
  });
});
