// The subscriber's life on PGlite, from the build's seed image as a new embedded database starts:
// two readers, each a mailbox written four ways (dots, googlemail, case, + tags), in either signup
// mode, driven through the app's routes and checked against the table after every event.
import { describeLives } from './describe-lives.ts';
import { modelStores } from './stores.ts';

const pglite = modelStores[0]!;
describeLives(pglite.name, pglite.available, pglite.open);
