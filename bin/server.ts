// The web server's entry point: `npm run dev` and the tests run it from source, the build makes it
// dist/bin/server.js (what `npm start` and the image run). Before anything else loads, Node's
// compile cache is turned on: the code V8 compiles for the server and its dependencies is kept on
// disk (NODE_COMPILE_CACHE, or a directory in the OS's temporary one) and reused by the next start.
// Where the directory cannot be made or written, Node reports that in the returned status and the
// server starts without the cache. Static imports are linked before a module's first line runs,
// so the server itself is imported afterwards, dynamically (bin/start-server.ts).
import { enableCompileCache } from 'node:module';

enableCompileCache();
const { start } = await import('./start-server.ts');
await start();
