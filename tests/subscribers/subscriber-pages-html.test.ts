// Every page a subscriber reaches from an e-mail is valid HTML by an outside judge: the W3C Nu
// checker (vnu-jar, run with Java) reads the confirm page, the unsubscribe page, the subscription
// page before and after a button, and the fresh-link pages, as the server sends them. The links are
// the ones in the `.eml` files the server wrote, as a reader would follow them.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfirmToken, createUnsubscribeToken, confirmUrlFor, subscriptionUrlFor, unsubscribeUrlFor } from '../../server/subscribers/signed-links.ts';
import { linksIn, readOutbox, settledOutbox } from '../support/outbox.ts';
import { startTestServer, TEST_UNSUBSCRIBE_SECRET, type TestServer } from '../support/server.ts';
import { addSignup } from '../support/store-ops.ts';

const run = promisify(execFile);
const vnuJar: string = createRequire(import.meta.url)('vnu-jar');
const javaAvailable = await run('java', ['-version']).then(
  () => true,
  () => false,
);

interface VnuMessage {
  type: string;
  subType?: string;
  message: string;
  url: string;
  lastLine?: number;
}

/** Nu's errors for each file (warnings and info left out). */
async function htmlErrors(files: readonly string[]): Promise<VnuMessage[]> {
  // vnu exits 1 when it finds an error; its JSON report on stderr is what counts either way.
  const result = await run('java', ['-jar', vnuJar, '--errors-only', '--format', 'json', ...files]).catch((error: { stderr?: string }) => ({ stderr: error.stderr ?? '' }));
  const report = JSON.parse(result.stderr || '{"messages":[]}') as { messages: VnuMessage[] };
  return report.messages.filter((message) => message.type === 'error' || message.subType === 'fatal');
}

describe.skipIf(!javaAvailable)('pages reached from an e-mail, by the W3C Nu checker', () => {
  let server: TestServer;
  let dir: string;
  const pages = new Map<string, string>();

  const save = async (name: string, response: Response) => {
    expect(response.headers.get('content-type'), name).toContain('text/html');
    pages.set(name, await response.text());
  };
  const post = (url: string, body: Record<string, string>) =>
    fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: server.url, 'sec-fetch-site': 'same-origin' },
      body: new URLSearchParams(body).toString(),
      redirect: 'manual',
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lw-vnu-'));
    server = await startTestServer({ config: { signupConfirmation: 'double' } });
    await addSignup(server.store, 'reader@example.com', '/');
    const reader = (await server.store.findSubscriberByEmail('reader@example.com'))!;
    const unsubscribeToken = createUnsubscribeToken(reader.id, TEST_UNSUBSCRIBE_SECRET);

    await save('confirm', await fetch(confirmUrlFor(server.url, createConfirmToken(reader.id, new Date(), TEST_UNSUBSCRIBE_SECRET))));
    await save('confirm-invalid', await fetch(`${server.url}/confirm?token=altered`));
    await save('unsubscribe', await fetch(unsubscribeUrlFor(server.url, unsubscribeToken)));
    await save('subscription', await fetch(subscriptionUrlFor(server.url, unsubscribeToken)));
    await save('subscription-invalid', await fetch(`${server.url}/subscription?token=altered`));
    await save('subscription-link-sent', await post(subscriptionUrlFor(server.url, unsubscribeToken), { action: 'download' }));
    await save('subscription-delete-link-sent', await post(subscriptionUrlFor(server.url, unsubscribeToken), { action: 'delete' }));

    const mail = await settledOutbox(server);
    const links = mail.flatMap((eml) => linksIn(eml, `${server.url}/subscription/link`));
    expect(links.length).toBe(2);
    for (const [index, link] of links.entries()) await save(`fresh-link-${index}`, await fetch(link));
    const deleteLink = links.find((link) => pages.get(`fresh-link-${links.indexOf(link)}`)?.includes('Delete'))!;
    await save('deleted', await post(deleteLink, {}));
    expect(pages.get('deleted')).toContain('Your data is deleted');
    await save('fresh-link-used', await fetch(deleteLink));
    await save('unsubscribe-gone', await fetch(unsubscribeUrlFor(server.url, unsubscribeToken)));
    expect((await readOutbox(server.outboxDir)).length).toBe(2);

    for (const [name, html] of pages) await writeFile(join(dir, `${name}.html`), html);
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reports no HTML error on any of them', async () => {
    expect(pages.size).toBe(12);
    const errors = await htmlErrors([...pages.keys()].map((name) => join(dir, `${name}.html`)));
    expect(errors.map((error) => `${error.url.split('/').pop()}:${error.lastLine ?? '?'} ${error.message}`)).toEqual([]);
  }, 120_000);

  it('is a checker that finds errors (a form inside a span)', async () => {
    const broken = join(dir, 'broken.html');
    await writeFile(broken, '<!doctype html><html lang="en"><head><title>x</title></head><body><span><form><button>x</button></form></span></body></html>');
    expect((await htmlErrors([broken])).length).toBeGreaterThan(0);
  }, 120_000);
});
