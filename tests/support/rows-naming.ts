// Where a value still appears in the database: every column of every table (outside the system
// schemas), cast to text, searched for it. What "no row names the id or the address" is checked by.
import type { SqlClient } from '../../server/store/sql-client.ts';

/**
 * Every column of every table (outside the system schemas), cast to text, searched for each
 * needle: the places that still name it.
 */
export async function rowsNaming(sql: SqlClient, needles: readonly string[]): Promise<string[]> {
  const columns = await sql.query<{ table_schema: string; table_name: string; column_name: string }>(
    `select c.table_schema, c.table_name, c.column_name
     from information_schema.columns c
     join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
     where c.table_schema not in ('pg_catalog', 'information_schema') and c.table_schema not like 'pg\\_%'
     order by 1, 2, 3`,
  );
  const found: string[] = [];
  for (const { table_schema, table_name, column_name } of columns.rows) {
    const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
    for (const needle of needles) {
      const hits = await sql.query<{ n: number }>(
        `select count(*)::int as n from ${quote(table_schema)}.${quote(table_name)} where strpos(lower(${quote(column_name)}::text), lower($1)) > 0`,
        [needle],
      );
      if (hits.rows[0]!.n > 0) found.push(`${table_schema}.${table_name}.${column_name} names ${needle} (${hits.rows[0]!.n} rows)`);
    }
  }
  return found;
}
