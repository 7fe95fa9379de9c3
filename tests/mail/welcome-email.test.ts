// WELCOME_EMAIL=on: one welcome e-mail per address, ever, when it becomes active (a single-mode
// signup, a confirmed double opt-in), linking the newest recap and the subscription page; never
// to a suppressed address, and nothing at all with the default (off).
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recapSummaries } from '../../content/index.ts';
import { chromiumAvailable, launchChromium } from '../support/browser.ts';
import { linksIn, settledOutbox } from '../support/outbox.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { addSignup } from '../support/store-ops.ts';

const subscribe = (server: TestServer, email: string) =>
  fetch(`${server.url}/api/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email }) });

const welcomes = async (server: TestServer, email: string) =>
  (await settledOutbox(server)).filter((eml) => eml.to === email && eml.subject === 'Welcome to Launched Weekly');

describe('Welcome e-mail, single mode', () => {
  let server: TestServer;
  let off: TestServer;
  beforeAll(async () => {
    [server, off] = await Promise.all([startTestServer({ config: { welcomeEmail: true } }), startTestServer()]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), off?.close()]);
  });

  it('goes once when the address becomes active, with links to the newest recap and the subscription page', async () => {
    expect((await subscribe(server, 'hello@example.com')).status).toBe(201);
    const [welcome, ...more] = await welcomes(server, 'hello@example.com');
    expect(more).toEqual([]);
    const today = new Date().toISOString().slice(0, 10);
    const newest = recapSummaries.find((summary) => summary.date <= today)!;
    expect(linksIn(welcome!, `${server.url}${newest.path}`)).toHaveLength(1);
    const [page] = linksIn(welcome!, `${server.url}/subscription?token=`);
    expect((await fetch(page!)).status).toBe(200);
    expect(welcome!.headers['list-unsubscribe']).toMatch(/^<.*\/unsubscribe\?token=.+>$/);

    // Leaving and coming back is not a second welcome.
    const { id } = (await server.store.findSubscriberByEmail('hello@example.com'))!;
    await server.store.removeSubscriber(id, 'unsubscribed');
    expect((await subscribe(server, 'hello@example.com')).status).toBe(201);
    expect(await welcomes(server, 'hello@example.com')).toHaveLength(1);
  });

  it('never goes to a suppressed address', async () => {
    await addSignup(server.store, 'bounced@example.com', '/');
    await server.store.removeSubscriber((await server.store.findSubscriberByEmail('bounced@example.com'))!.id, 'bounced');
    expect((await subscribe(server, 'bounced@example.com')).status).toBe(202);
    expect(await welcomes(server, 'bounced@example.com')).toEqual([]);
  });

  it('is not sent with WELCOME_EMAIL off (the default)', async () => {
    expect((await subscribe(off, 'quiet@example.com')).status).toBe(201);
    expect(await settledOutbox(off)).toEqual([]);
  });
});

describe.skipIf(!chromiumAvailable)('Welcome e-mail, double mode', () => {
  let server: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    [server, browser] = await Promise.all([startTestServer({ config: { welcomeEmail: true, signupConfirmation: 'double' } }), launchChromium()]);
  });
  afterAll(async () => {
    await Promise.all([server?.close(), browser?.close()]);
  });

  it('goes after the confirmation button is pressed, not at signup', async () => {
    expect((await subscribe(server, 'later@example.com')).status).toBe(202);
    expect(await welcomes(server, 'later@example.com')).toEqual([]);
    const [confirmation] = (await settledOutbox(server)).filter((eml) => eml.to === 'later@example.com');
    const page = await browser.newPage();
    try {
      await page.goto(linksIn(confirmation!, `${server.url}/confirm?token=`)[0]!);
      await page.getByRole('button', { name: 'Confirm my subscription' }).click();
      await page.getByRole('heading', { name: 'You are subscribed' }).waitFor();
    } finally {
      await page.close();
    }
    expect(await welcomes(server, 'later@example.com')).toHaveLength(1);
  });
});
