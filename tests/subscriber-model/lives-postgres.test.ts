// The subscriber's life on PostgreSQL: the same generated lives as on PGlite (lives-pglite.test.ts),
// in a file of its own so the two stores run side by side.
import { describeLives } from './describe-lives.ts';
import { modelStores } from './stores.ts';

const postgres = modelStores[1]!;
describeLives(postgres.name, postgres.available, postgres.open);
