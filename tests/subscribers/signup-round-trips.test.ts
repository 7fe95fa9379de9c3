// One database call per signup. A post's two limit counts and its row go to the database
// in one call (signup_counted, from server/subscribers/routes/subscribe.ts), and the row is written only when
// both counts are within their limits, also when many posts over a limit arrive at once. Through
// the real app on every backend; the store is wrapped only to count which of its operations each
// post reached.
import type { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../server/store/types.ts';
import { agentFrom, send } from '../support/from-address.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { storeBackends, type OpenedBackend } from '../support/store-backends.ts';

const PER_MINUTE = 10;

interface Calls {
  counts: number;
  countedSignUps: number;
  signUps: number;
}

/** The store as the app sees it, counting the calls of the three operations a signup can reach. */
function counted(store: Store, calls: Calls): Store {
  return {
    ...store,
    hitRateLimit: (...args) => {
      calls.counts++;
      return store.hitRateLimit(...args);
    },
    signUpCounted: (...args) => {
      calls.countedSignUps++;
      return store.signUpCounted(...args);
    },
    signUp: (request) => {
      calls.signUps++;
      return store.signUp(request);
    },
  };
}

const post = (agent: Agent, url: string, email: string) =>
  send(agent, `${url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });

for (const backend of storeBackends) {
  describe.skipIf(!backend.available)(`signup round trips on ${backend.name}`, () => {
    let opened: OpenedBackend;
    let server: TestServer;
    const calls: Calls = { counts: 0, countedSignUps: 0, signUps: 0 };
    const agents: Agent[] = [];
    const from = (address: string) => {
      const agent = agentFrom(address);
      agents.push(agent);
      return agent;
    };
    const stored = async (email: string) => (await opened.store.findSubscriberByEmail(email)) !== null;

    beforeAll(async () => {
      opened = await backend.open();
      server = await startTestServer({ store: counted(opened.store, calls), config: { rateLimitPerMinute: PER_MINUTE } });
      // The first signup reads the mailbox key from the store; afterwards a row is ready at once.
      expect((await post(from('127.0.40.1'), server.url, 'first@example.com')).status).toBe(201);
    });

    afterAll(async () => {
      for (const agent of agents) agent.destroy();
      await server?.close();
      await opened?.cleanup();
    });

    it('writes a burst of new addresses with one store call each', async () => {
      const before = { ...calls };
      const emails = Array.from({ length: 24 }, (_, i) => `burst-${i}@example.com`);
      const replies = await Promise.all(emails.map((email, i) => post(from(`127.0.41.${i + 1}`), server.url, email)));
      expect(replies.map((reply) => reply.status)).toEqual(emails.map(() => 201));
      for (const reply of replies) expect(JSON.parse(reply.body)).toEqual({ status: 'subscribed' });
      for (const email of emails) expect(await stored(email)).toBe(true);
      expect(calls.countedSignUps - before.countedSignUps).toBe(emails.length);
      expect(calls.counts - before.counts).toBe(0);
      expect(calls.signUps - before.signUps).toBe(0);
    });

    it('writes only the posts within the limit per network address, when all of them arrive at once', async () => {
      const agent = from('127.0.42.1');
      const emails = Array.from({ length: PER_MINUTE + 4 }, (_, i) => `one-address-${i}@example.com`);
      const replies = await Promise.all(emails.map((email) => post(agent, server.url, email)));
      const statuses = replies.map((reply) => reply.status);
      expect(statuses.filter((status) => status === 201)).toHaveLength(PER_MINUTE);
      expect(statuses.filter((status) => status === 429)).toHaveLength(4);
      for (const [i, email] of emails.entries()) expect(await stored(email)).toBe(statuses[i] === 201);
    });

    it('counts only three spellings of one mailbox a day and keeps one row for them, and a repeat of an address once', async () => {
      const before = { ...calls };
      const spellings = ['victim@gmail.com', 'v.ictim@gmail.com', 'victim+1@gmail.com', 'vic.tim+2@gmail.com', 'victim+3@googlemail.com'];
      const replies = await Promise.all(spellings.map((email, i) => post(from(`127.0.43.${i + 1}`), server.url, email)));
      const statuses = replies.map((reply) => reply.status);
      // One mailbox, one row: the first is subscribed, the next two within the day's
      // limit find it already subscribed, the rest are over the limit.
      expect(statuses.filter((status) => status === 201)).toHaveLength(1);
      expect(statuses.filter((status) => status === 409)).toHaveLength(2);
      expect(statuses.filter((status) => status === 429)).toHaveLength(2);
      const rows = (await opened.store.listAllSubscribers(null, 10_000)).filter((record) => /^v\.?ic\.?tim/.test(record.email));
      expect(rows.map((record) => record.email)).toEqual([spellings[statuses.indexOf(201)]!.toLowerCase()]);

      // The same new address twice at once: one row, one 201 and one 409.
      const twice = await Promise.all([post(from('127.0.44.1'), server.url, 'twice@example.com'), post(from('127.0.44.2'), server.url, 'twice@example.com')]);
      expect(twice.map((reply) => reply.status).sort()).toEqual([201, 409]);
      expect(calls.countedSignUps - before.countedSignUps).toBe(spellings.length + 2);
      expect(calls.signUps - before.signUps).toBe(0);
    });
  });
}
