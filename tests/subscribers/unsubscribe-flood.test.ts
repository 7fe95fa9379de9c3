// RFC 8058 one-click unsubscribes come from a mailbox provider's few servers for
// all of its users, so POST /unsubscribe must never be limited per network address, and must not
// use up the signup limit of that address either. 5,000 valid one-click posts from three real
// loopback addresses, with the default signup limit (10 a minute) in force.
import type { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUnsubscribeToken } from '../../server/subscribers/signed-links.ts';
import { agentFrom, inParallel, send } from '../support/from-address.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';
import { addSignup } from '../support/store-ops.ts';

const SUBSCRIBERS = 5_000;
const ADDRESSES = ['127.0.0.1', '127.0.0.2', '127.0.0.3'];

describe('5,000 one-click unsubscribes from 3 network addresses', () => {
  let server: TestServer;
  let agents: Agent[];

  beforeAll(async () => {
    server = await startTestServer({ config: { rateLimitPerMinute: 10 } });
    agents = ADDRESSES.map((address) => agentFrom(address));
    const emails = Array.from({ length: SUBSCRIBERS }, (_, i) => `one.click.${i}@example.com`);
    // Concurrent signups race on their rows.
    await Promise.all(emails.map((email) => addSignup(server.store, email, '/')));
  });

  afterAll(async () => {
    for (const agent of agents ?? []) agent.destroy();
    await server?.close();
  });

  it('all answer 200 and unsubscribe, and a real signup from one of those addresses still works afterwards', async () => {
    const subscribers = await server.store.listAllSubscribers(null, SUBSCRIBERS + 10);
    expect(subscribers).toHaveLength(SUBSCRIBERS);
    const started = performance.now();
    const statuses = await inParallel(subscribers, 24, (subscriber, i) =>
      send(agents[i % agents.length]!, `${server.url}/unsubscribe?token=${createUnsubscribeToken(subscriber.id, TEST_UNSUBSCRIBE_SECRET)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      }).then((reply) => reply.status),
    );
    const seconds = (performance.now() - started) / 1000;
    const byStatus: Record<string, number> = {};
    for (const status of statuses) byStatus[status] = (byStatus[status] ?? 0) + 1;
    console.log(`[unsubscribe flood] ${statuses.length} one-click posts from ${ADDRESSES.length} addresses in ${seconds.toFixed(1)} s: ${JSON.stringify(byStatus)} (status: count)`);
    expect(byStatus).toEqual({ 200: SUBSCRIBERS });
    expect(await server.store.countSubscribers()).toMatchObject({ active: 0, inactive: SUBSCRIBERS });

    // The unsubscribes used none of 127.0.0.2's signup allowance.
    const signup = await send(agents[1]!, `${server.url}/api/subscribe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'new.reader.after.monday@example.com' }),
    });
    expect(signup.status).toBe(201);
    expect(await server.store.findSubscriberByEmail('new.reader.after.monday@example.com')).toMatchObject({ active: true });
  }, 180_000);
});
