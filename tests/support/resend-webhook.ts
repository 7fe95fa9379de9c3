// Resend's webhooks as Resend sends them: the event's JSON body signed with svix's own
// Webhook.sign over the raw body, posted to the app's /webhooks/resend.
import { randomBytes, randomUUID } from 'node:crypto';
import { Webhook } from 'svix';
import type { TestServer } from './server.ts';

/** A secret in the shape Resend's dashboard gives (whsec_ + base64), for RESEND_WEBHOOK_SECRET. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/** Posts a signed `email.complained` event for one message to `to`; the app's answer. */
export function postComplaint(server: TestServer, secret: string, to: string): Promise<{ status: number; body: unknown }> {
  return postEmailEvent(server, secret, 'email.complained', to, {});
}

/** Posts a signed permanent `email.bounced` event for one message to `to`; the app's answer. */
export function postBounce(server: TestServer, secret: string, to: string): Promise<{ status: number; body: unknown }> {
  return postEmailEvent(server, secret, 'email.bounced', to, { bounce: { type: 'Permanent', subType: 'General' } });
}

async function postEmailEvent(server: TestServer, secret: string, type: string, to: string, extra: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
  const at = new Date();
  const body = JSON.stringify({
    type,
    created_at: at.toISOString(),
    data: { created_at: at.toISOString(), email_id: randomUUID(), from: 'Launched Weekly <digest@launchedweekly.com>', to: [to], subject: 'Launched Weekly', ...extra },
  });
  const response = await postSignedWebhook(server, secret, body, { at });
  return { status: response.status, body: (await response.json()) as unknown };
}

/** Posts a raw event body to the app's /webhooks/resend as Resend delivers it: signed under `secret`, as delivery `id` sent at `at`. */
export function postSignedWebhook(
  server: Pick<TestServer, 'url'>,
  secret: string,
  body: string,
  { id = `msg_${randomBytes(8).toString('hex')}`, at = new Date() }: { id?: string; at?: Date } = {},
): Promise<Response> {
  return fetch(`${server.url}/webhooks/resend`, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'svix-id': id,
      'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
      'svix-signature': new Webhook(secret).sign(id, at, body),
    },
  });
}
