// Raw databases to apply supabase/migrations to, a prefix of them at a time: an in-memory PGlite
// and a fresh PostgreSQL database (with Supabase's API roles when asked). Tests write rows as an
// older schema had them, then apply the rest, as an installation upgrading would.
import { PGlite } from '@electric-sql/pglite';
import { createPgClient } from '../../server/store/postgres.ts';
import type { SqlClient } from '../../server/store/sql-client.ts';
import { createTestDatabase, postgresUrl } from './postgres.ts';
import { pgliteClient } from './sql-backends.ts';
import { createSupabaseRoles } from './supabase-roles.ts';

export interface MigrationKind {
  name: 'PGlite' | 'PostgreSQL';
  available: boolean;
  /** A fresh database; `roles` adds Supabase's API roles first (Postgres only). */
  create(roles?: boolean): Promise<{ client: SqlClient; drop(): Promise<void> }>;
}

export const migrationKinds: MigrationKind[] = [
  {
    name: 'PGlite',
    available: true,
    async create() {
      const client = pgliteClient(new PGlite());
      return { client, drop: () => client.close() };
    },
  },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    async create(roles = false) {
      const db = await createTestDatabase({ from: 'empty' });
      if (roles) await createSupabaseRoles(db.url);
      const client = createPgClient(db.url, { max: 2 });
      return {
        client,
        async drop() {
          await client.close();
          await db.drop();
        },
      };
    },
  },
];
