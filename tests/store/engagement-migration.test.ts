// A database from before engagement counts, where the webhook stored every email.delivered, email.opened and
// email.clicked as a row naming the subscriber: migrating turns those rows into the per-recap counts
// the report reads, and deletes them; bounces and complaints stay as they were. PGlite and PostgreSQL.
import { describe, expect, it } from 'vitest';
import { loadMigrations, migrate } from '../../server/store/migrate.ts';
import { createPgClient } from '../../server/store/postgres.ts';
import type { SqlClient } from '../../server/store/sql-client.ts';
import { sqlStore } from '../../server/store/sql-store.ts';
import { createTestDatabase, postgresUrl } from '../support/postgres.ts';
import { rowsNaming } from '../support/rows-naming.ts';
import { pgliteClient } from '../support/sql-backends.ts';
import { addSignup, recordDeliveries } from '../support/store-ops.ts';

const COUNTS_FROM = '20261128003030';

const kinds = [
  { name: 'PGlite', available: true, open: async () => ({ client: pgliteClient(), backend: 'pglite' as const, drop: async () => {} }) },
  {
    name: 'PostgreSQL',
    available: postgresUrl !== null,
    open: async () => {
      const db = await createTestDatabase({ from: 'empty' });
      return { client: createPgClient(db.url, { max: 2 }) as SqlClient, backend: 'postgres' as const, drop: () => db.drop() };
    },
  },
];

for (const kind of kinds) {
  describe.skipIf(!kind.available)(`engagement rows of an older database on ${kind.name}`, () => {
    it('become counts per recap, and no row names the subscriber or their message any more', async () => {
      const { client, backend, drop } = await kind.open();
      const store = sqlStore(backend, client);
      try {
        const migrations = await loadMigrations();
        await migrate(client, migrations.filter((m) => m.version < COUNTS_FROM));
        for (const email of ['ada@readers.test', 'grace@readers.test']) await addSignup(store, email, '/');
        const [ada, grace] = await Promise.all(['ada@readers.test', 'grace@readers.test'].map(async (email) => (await store.findSubscriberByEmail(email))!.id));
        await recordDeliveries(store, '2025-07-14', [
          { subscriberId: ada!, providerMessageId: 'message-ada' },
          { subscriberId: grace!, providerMessageId: 'message-grace' },
        ]);
        const event = (svixId: string, type: string, providerMessageId: string, subscriberId: string | null) =>
          store.recordEmailEvent({ svixId, type, providerMessageId, subscriberId, occurredAt: new Date() });
        await event('msg_1', 'email.delivered', 'message-ada', ada!);
        await event('msg_2', 'email.delivered', 'message-grace', grace!);
        await event('msg_3', 'email.opened', 'message-ada', ada!);
        await event('msg_4', 'email.opened', 'message-ada', ada!);
        await event('msg_5', 'email.clicked', 'message-grace', grace!);
        await event('msg_6', 'email.delivered', 'a-confirmation', null);
        await event('msg_7', 'email.bounced', 'message-grace', grace!);

        await migrate(client, migrations);
        expect(await store.engagementCounts()).toEqual({
          clicks: [],
          events: [
            { recapDate: '2025-07-14', type: 'email.clicked', events: 1 },
            { recapDate: '2025-07-14', type: 'email.delivered', events: 2 },
            { recapDate: '2025-07-14', type: 'email.opened', events: 2 },
          ],
        });
        const left = await client.query<{ event_type: string }>('select event_type from public.email_events order by id');
        expect(left.rows.map((row) => row.event_type)).toEqual(['email.bounced']);
        expect((await rowsNaming(client, [ada!])).filter((place) => place.includes('email_events'))).toEqual([]);
      } finally {
        await store.close();
        await drop();
      }
    });
  });
}
