// A plain node:http server on a free loopback port, for tests that put the app (or a stand-in)
// behind a server of their own instead of startTestServer.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Starts `server` on a free loopback port and gives its base URL, which the app's siteUrl must name before it serves. */
export async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Stops `server`, ending kept-alive connections too, so a client's pooled connection cannot hold the close up. */
export function closeLoopback(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
