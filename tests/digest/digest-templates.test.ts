// The digest through Resend's templates, on PGlite and PostgreSQL against the Resend stand-in
// through the SDK: the week's e-mail is registered once as a template and each message carries
// only its link token, yet every recipient gets exactly the message the whole-copy rendering
// gives. A resumed run reuses the template (found by its alias); a template the provider no
// longer has, or has only as a draft, stops the run like a failed batch and the rerun sends the
// rest exactly once. The outbox fills the same template in itself: its bodies are the same too.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Resend } from 'resend';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { recaps } from '../../content/index.ts';
import { prepareDigest } from '../../server/mail/templates/render-digest.ts';
import { digestContentOf, digestTemplateOf, messageFrom, templatedMessageFrom } from '../../server/mail/digest/content.ts';
import { runWeeklyDigest, type DigestReport } from '../../server/mail/digest/run.ts';
import { composeEml, OutboxMailer } from '../../server/mail/outbox.ts';
import { ResendMailer } from '../../server/mail/resend.ts';
import { wholeMessage } from '../../server/mail/template.ts';
import type { Mailer } from '../../server/mail/types.ts';
import type { DigestContent, Store, Subscriber } from '../../server/store/types.ts';
import { startFakeResend, type FakeResend } from '../support/fake-resend.ts';
import { readOutbox } from '../support/outbox.ts';
import { storeBackends, type OpenedBackend } from '../support/store-backends.ts';
import { addSignup, listActiveSubscribers } from '../support/store-ops.ts';

const SECRET = 'digest-templates-secret-0123456789abcdef0123456789';
const FROM = 'Launched Weekly <digest@launchedweekly.test>';
const SITE_URL = 'https://launchedweekly.test';
const RECAP = recaps.find((r) => r.date === '2025-07-14')!;
const SUBSCRIBERS = 250;

let fake: FakeResend;
beforeAll(async () => {
  fake = await startFakeResend();
});
afterAll(async () => {
  await fake.close();
});

const resend = () => new ResendMailer({ apiKey: 're_test_templates', baseUrl: fake.url, from: FROM, policy: { maxAttempts: 2, baseDelayMs: 10, maxDelayMs: 20 } });

const run = (store: Store, mailer: Mailer = resend()): Promise<DigestReport> =>
  runWeeklyDigest({
    store,
    mailer,
    recaps,
    now: new Date('2025-07-15T09:00:00Z'),
    siteUrl: SITE_URL,
    unsubscribeSecret: SECRET,
    mode: 'manual',
    recapWeek: RECAP.date,
    freshnessDays: 7,
  });

async function wholeContent(): Promise<DigestContent> {
  return digestContentOf(await prepareDigest(RECAP, SITE_URL), FROM, SITE_URL, SECRET);
}

const templateRequests = (kind: string) => fake.requests.filter((r) => r.kind === kind).length;

/** What each test of a backend works with: its set-up fills it afresh before each test. */
interface TemplateContext {
  opened: OpenedBackend;
  subscribers: Subscriber[];
  /** The week's e-mail as whole copies render it: what every recipient must get. */
  content: DigestContent;
}

/** Every subscriber got one message, exactly the one the whole-copy rendering makes. */
function expectEveryoneServedOnceAsBefore(ctx: TemplateContext) {
  const received = fake.forRecap(RECAP.date);
  expect(received).toHaveLength(SUBSCRIBERS);
  for (const subscriber of ctx.subscribers) {
    const got = fake.deliveredTo(subscriber.email, RECAP.date);
    expect(got, subscriber.email).toHaveLength(1);
    const before = messageFrom(ctx.content, subscriber, SECRET);
    expect({ subject: got[0]!.subject, html: got[0]!.html, text: got[0]!.text, headers: got[0]!.headers }).toEqual({
      subject: before.subject,
      html: before.html,
      text: before.text,
      headers: before.headers,
    });
  }
}

/** The template is registered once and reused, whatever stopped the run before. */
function registeringTheTemplate(ctx: TemplateContext) {
  it('sends each recipient the same message as a whole copy, with one template created and published', async () => {
    const report = await run(ctx.opened.store);
    expect(report).toMatchObject({ outcome: 'sent', sent: SUBSCRIBERS });
    expectEveryoneServedOnceAsBefore(ctx);
    expect(templateRequests('template-created')).toBe(1);
    expect(templateRequests('template-published')).toBe(1);
    const [template] = [...fake.templates.values()];
    expect(template).toMatchObject({ status: 'published', alias: digestTemplateOf(ctx.content)!.alias, variables: [expect.objectContaining({ key: 'LINK_TOKEN' }), expect.objectContaining({ key: 'SHARE_CODE' })] });
    // What made copies heavy is now sent once: a batch carries the token, not the body.
    expect(template!.html.length).toBeGreaterThan(10_000);
  });

  it('reuses the template when a stopped run resumes, and sends the rest exactly once', async () => {
    fake.onBatchAccepted = () => {
      if (fake.forRecap(RECAP.date).length === 100) fake.outage = true;
    };
    const stopped = await run(ctx.opened.store);
    expect(stopped.outcome).toBe('stopped');
    expect(stopped.message).toMatch(/the provider kept failing/);
    fake.onBatchAccepted = null;
    fake.outage = false;
    const resumed = await run(ctx.opened.store);
    expect(resumed).toMatchObject({ outcome: 'sent', sent: SUBSCRIBERS - 100 });
    expectEveryoneServedOnceAsBefore(ctx);
    expect(templateRequests('template-created')).toBe(1);
    expect(fake.templates.size).toBe(1);
  });

  it('stops before writing any batch when the provider is down as the template is registered, and the rerun sends everything once', async () => {
    fake.outage = true;
    const stopped = await run(ctx.opened.store);
    fake.outage = false;
    expect(stopped).toMatchObject({ outcome: 'stopped', sent: 0 });
    expect(stopped.message).toMatch(/the provider kept failing: template launched-weekly-digest-2025-07-14-[0-9a-f]{16}: service_unavailable \(HTTP 503\)/);
    expect(await ctx.opened.store.openDigestBatches(RECAP.date)).toEqual([]);
    expect(fake.templates.size).toBe(0);
    expect(await run(ctx.opened.store)).toMatchObject({ outcome: 'sent', sent: SUBSCRIBERS });
    expectEveryoneServedOnceAsBefore(ctx);
    expect(templateRequests('template-created')).toBe(1);
  });

  it('publishes a template an earlier run created but left a draft, instead of creating another', async () => {
    const template = digestTemplateOf(ctx.content)!;
    const draft = await new Resend('re_test_templates', { baseUrl: fake.url }).templates.create({ name: template.name, alias: template.alias, subject: template.subject, html: template.html, text: template.text, variables: template.variables.map((key) => ({ key, type: 'string' as const })) });
    expect(draft.error).toBeNull();
    expect(await run(ctx.opened.store)).toMatchObject({ outcome: 'sent', sent: SUBSCRIBERS });
    expectEveryoneServedOnceAsBefore(ctx);
    expect(templateRequests('template-created')).toBe(1);
    expect(fake.templates.get(draft.data!.id)).toMatchObject({ status: 'published' });
  });
}

/** A template the provider lost, or has only as a draft again, stops the run like a failed batch. */
function losingTheTemplateMidRun(ctx: TemplateContext) {
  it.each([
    ['gone (404)', () => fake.templates.clear(), 2],
    ['back to a draft (422)', () => [...fake.templates.values()].forEach((t) => (t.status = 'draft')), 1],
  ] as const)('stops like a failed batch when the template is %s, and the rerun sends the rest once', async (_, spoil, created) => {
    fake.onBatchAccepted = () => {
      if (fake.forRecap(RECAP.date).length === 100) spoil();
    };
    const stopped = await run(ctx.opened.store);
    fake.onBatchAccepted = null;
    expect(stopped).toMatchObject({ outcome: 'stopped', sent: 100 });
    expect(stopped.message).toMatch(/the provider kept failing: template_unavailable/);
    expect(fake.requests.filter((r) => r.kind === 'template').length).toBe(1);
    // The provider refused the batch outright (nothing went out), so it is closed rather than left
    // pending: the rerun writes its readers into a new batch.
    expect(await ctx.opened.store.openDigestBatches(RECAP.date)).toEqual([]);

    expect(await run(ctx.opened.store)).toMatchObject({ outcome: 'sent', sent: SUBSCRIBERS - 100 });
    expectEveryoneServedOnceAsBefore(ctx);
    expect(templateRequests('template-created')).toBe(created);
  });
}

/** The outbox fills the same template in itself. */
function fillingTheTemplateInTheOutbox(ctx: TemplateContext) {
  it('writes the same .eml files to the outbox as whole copies did, byte for byte', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lw-template-outbox-'));
    try {
      expect(await run(ctx.opened.store, new OutboxMailer({ dir, from: FROM }))).toMatchObject({ outcome: 'sent', sent: SUBSCRIBERS });
      const emls = await readOutbox(dir);
      expect(emls).toHaveLength(SUBSCRIBERS);
      const byAddress = new Map(ctx.subscribers.map((s) => [s.email, s]));
      for (const eml of emls) {
        const whole = messageFrom(ctx.content, byAddress.get(eml.to)!, SECRET);
        const before = await composeEml(whole, `<${eml.name.replace(/\.eml$/, '')}@outbox.launched-weekly>`);
        expect(comparable(eml.raw), eml.name).toBe(comparable(before.toString('utf8')));
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
}

describe.each(storeBackends.filter((b) => b.name !== 'supabase' && b.available))('The digest through a template on $name', (backend) => {
  const ctx = {} as TemplateContext;

  beforeEach(async () => {
    fake.messages.length = 0;
    fake.requests.length = 0;
    fake.templates.clear();
    fake.outage = false;
    fake.onBatchAccepted = null;
    ctx.opened = await backend.open();
    for (let i = 1; i <= SUBSCRIBERS; i++) await addSignup(ctx.opened.store, `reader${String(i).padStart(3, '0')}@example.com`, '/');
    ctx.subscribers = await listActiveSubscribers(ctx.opened.store, null, SUBSCRIBERS + 1);
    ctx.content = await wholeContent();
    return () => ctx.opened.cleanup();
  });

  registeringTheTemplate(ctx);
  losingTheTemplateMidRun(ctx);
  fillingTheTemplateInTheOutbox(ctx);
});

/** An .eml without what differs between any two compositions: its Date and its MIME boundaries. */
function comparable(raw: string): string {
  const boundaries = [...raw.matchAll(/boundary="([^"]+)"/g)].map((m) => m[1]!);
  let out = raw.replace(/^Date: .*\r?\n/m, '');
  boundaries.forEach((boundary, i) => (out = out.replaceAll(boundary, `BOUNDARY${i}`)));
  return out;
}

describe('A templated message', () => {
  it('fills in to exactly the whole copy, for every subscriber id shape', async () => {
    const content = await wholeContent();
    const template = digestTemplateOf(content)!;
    expect(template).not.toBeNull();
    for (const id of ['1', '00000000-0000-4000-8000-000000000000', 'ünïcödé id', 'a&b"<c>']) {
      const subscriber = { id, email: 'someone@example.com', shareCode: 'fedcba9876543210' };
      const filled = wholeMessage(templatedMessageFrom(content, { ...template, id: 'x' }, subscriber, SECRET));
      expect(filled).toEqual(messageFrom(content, subscriber, SECRET));
    }
  });

  it('is not used when the rendering holds braces a provider would read as placeholders', async () => {
    const content = await wholeContent();
    expect(digestTemplateOf({ ...content, html: content.html.replace('</body>', '{{{NAME}}}</body>') })).toBeNull();
    expect(digestTemplateOf({ ...content, bodyText: `${content.bodyText} {{x}}` })).toBeNull();
  });
});
