// express.static serving one saved page, in a plain Node process with Node's defaults (no flags, no
// allocator settings): the reference the SSR path is held against, as an outside check would run
// it. Started as `node bench/support/static-server.ts DIR` (Node runs the TypeScript as is); prints
// {"port": …} once it listens.
import express from 'express';
import type { AddressInfo } from 'node:net';

const dir = process.argv[2];
if (!dir) throw new Error('usage: node bench/support/static-server.ts DIR');
const app = express();
app.disable('x-powered-by');
app.use(express.static(dir));
const server = app.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
