// The web server's entry point from source (`npm run dev`, the tests); the build's dist/bin/server.js
// is bin/compiled-server.ts. Before anything else loads, Node's compile cache is turned on: the
// code V8 compiles for the server and its dependencies is kept on disk (in the OS's temporary
// directory, or NODE_COMPILE_CACHE) and reused by the next start. Where the directory cannot be
// made or written, Node reports that in the returned status and the server starts without the
// cache. Static imports are linked before a module's first line runs, so the server itself is
// imported afterwards, dynamically (bin/serve.ts).
import { enableCompileCache } from 'node:module';

enableCompileCache();
const { start } = await import('./serve.ts');
await start();
