// POST /webhooks/resend: Resend reports bounces and spam complaints here, signed the Svix way
// (svix-id, svix-timestamp, svix-signature over the raw body). A hard bounce or a complaint ends
// the subscription so no further Monday e-mail goes to that address; a digest's delivered, opened
// and clicked events are only counted per recap (record-email-event.ts); everything else is
// acknowledged and ignored. Replays are harmless: removing a subscriber keeps the first reason.
// A bounce counts only for the spelling the row delivers to (one merged away, or replaced by the
// owner's own, says nothing about it); a complaint for an address with no row (deleted before the
// provider reported it) still puts its mailbox on the suppression list.
import express, { type Request, type Response, type Router } from 'express';
import type { Webhook } from 'svix';
import * as z from 'zod';
import { normalizeEmail } from '../../../content/email-address.ts';
import { sendError } from '../../http/errors.ts';
import type { Logger } from '../../http/logger.ts';
import type { RemovalReason, SiteStore } from '../../store/types.ts';
import { canonicalAddress } from '../../subscribers/mailbox-key.ts';
import type { SubscriberKeys } from '../../subscribers/subscriber-keys.ts';
import { recordEmailEvent } from '../record-email-event.ts';

export interface ResendWebhookOptions {
  store: SiteStore;
  /** RESEND_WEBHOOK_SECRET (whsec_…); without it the endpoint answers 503. */
  secret: string | undefined;
  /** The mailbox hashes, to suppress a complained mailbox that has no row. */
  keys: SubscriberKeys;
  logger: Logger;
}

export const RESEND_WEBHOOK_PATH = '/webhooks/resend';

// Resend's documented envelope: { type, created_at, data }; e-mail events carry data.to (the
// recipients) and email.bounced carries data.bounce { type, subType, message }.
const eventSchema = z.object({
  type: z.string(),
  data: z
    .object({
      to: z.union([z.array(z.string()), z.string()]).optional(),
      bounce: z.object({ type: z.string().optional(), subType: z.string().optional() }).partial().optional(),
    })
    .optional(),
});

type ResendEvent = z.infer<typeof eventSchema>;

/**
 * Which removal an event means, or null for none. Resend documents email.bounced as "the
 * recipient's mail server permanently rejected the email" and types the bounce Permanent,
 * Transient or Undetermined: only a permanent one (or one without a type, which the event's own
 * definition makes permanent) ends the subscription; a full mailbox may take mail next week.
 */
function removalFor(event: ResendEvent): RemovalReason | null {
  if (event.type === 'email.complained') return 'complained';
  if (event.type === 'email.bounced') {
    const bounceType = event.data?.bounce?.type;
    return bounceType === undefined || bounceType.toLowerCase() === 'permanent' ? 'bounced' : null;
  }
  return null;
}

function recipients(event: ResendEvent): string[] {
  const to = event.data?.to;
  const list = to === undefined ? [] : Array.isArray(to) ? to : [to];
  // A recipient may be written "Name <address>".
  return list.map((entry) => normalizeEmail(/<([^<>]+)>\s*$/.exec(entry)?.[1] ?? entry)).filter((email) => email.includes('@'));
}

/**
 * Applies a bounce or complaint for one recipient; true when a row's state was asked to change.
 * A bounce of a spelling other than the row's delivery address changes nothing; a complaint for a
 * mailbox with no row suppresses the mailbox.
 */
async function applyRemoval(store: SiteStore, keys: SubscriberKeys, email: string, reason: RemovalReason): Promise<boolean> {
  const subscriber = await store.findSubscriberByEmail(email);
  if (!subscriber) {
    if (reason === 'complained') {
      const [mailboxHash] = await keys.addressHashes(email);
      await store.suppressMailbox(mailboxHash!, 'complained');
    }
    return false;
  }
  const canonical = canonicalAddress(email);
  if (reason === 'bounced' && subscriber.email !== (canonical.ok ? canonical.email : email)) return false;
  return store.removeSubscriber(subscriber.id, reason);
}

/**
 * svix (a quarter of a megabyte of JavaScript) is loaded by the first signed request, not at start:
 * Resend posts a few events a week, and every page view would otherwise pay for it in memory.
 */
async function loadSvix(secret: string): Promise<{ verifier: Webhook; isVerificationError: (error: unknown) => error is Error }> {
  const { Webhook: SvixWebhook, WebhookVerificationError } = await import('svix');
  return { verifier: new SvixWebhook(secret), isVerificationError: (error): error is Error => error instanceof WebhookVerificationError };
}

export function resendWebhookRouter({ store, secret, keys, logger }: ResendWebhookOptions): Router {
  const router = express.Router();
  let svix: ReturnType<typeof loadSvix> | undefined;

  router.post(RESEND_WEBHOOK_PATH, express.raw({ type: 'application/json', limit: '64kb' }), async (req: Request, res: Response) => {
    if (!secret) {
      sendError(res, 503, 'webhooks_not_configured', 'Webhooks are not configured: set RESEND_WEBHOOK_SECRET to the endpoint’s signing secret.');
      return;
    }
    if (!Buffer.isBuffer(req.body)) {
      sendError(res, 415, 'unsupported_media_type', 'Send the event as application/json.');
      return;
    }
    const headers = { 'svix-id': req.get('svix-id'), 'svix-timestamp': req.get('svix-timestamp'), 'svix-signature': req.get('svix-signature') };
    if (!headers['svix-id'] || !headers['svix-timestamp'] || !headers['svix-signature']) {
      sendError(res, 400, 'missing_signature', 'The svix-id, svix-timestamp and svix-signature headers are required.');
      return;
    }
    svix ??= loadSvix(secret);
    const { verifier, isVerificationError } = await svix;
    try {
      verifier.verify(req.body, headers as Record<string, string>);
    } catch (error) {
      if (!isVerificationError(error)) throw error;
      const stale = /timestamp too (old|new)/i.test(error.message);
      logger.warn({ svixId: headers['svix-id'], reason: error.message }, 'Resend webhook refused');
      if (stale) {
        sendError(res, 401, 'stale_timestamp', 'The webhook timestamp is more than 5 minutes away from the server’s clock; it is refused as a possible replay.');
      } else {
        sendError(res, 401, 'invalid_signature', 'The webhook signature does not match the body and RESEND_WEBHOOK_SECRET.');
      }
      return;
    }

    let event: ResendEvent;
    try {
      event = eventSchema.parse(JSON.parse(req.body.toString('utf8')));
    } catch {
      sendError(res, 400, 'invalid_event', 'The body is not a Resend event: JSON with a "type" and a "data" object.');
      return;
    }

    try {
      await recordEmailEvent(store, req.body, headers['svix-id'], headers['svix-timestamp'], recipients(event));
    } catch (error) {
      logger.error({ err: error, svixId: headers['svix-id'] }, 'Resend webhook event could not be stored');
      sendError(res, 503, 'unavailable', 'The event could not be stored; it will be retried.');
      return;
    }

    const reason = removalFor(event);
    if (!reason) {
      res.json({ status: 'ignored', type: event.type });
      return;
    }
    let removed = 0;
    try {
      for (const email of recipients(event)) removed += (await applyRemoval(store, keys, email, reason)) ? 1 : 0;
    } catch (error) {
      // Not acknowledged, so Resend delivers the event again later.
      logger.error({ err: error, svixId: headers['svix-id'] }, 'Resend webhook could not be applied');
      sendError(res, 503, 'unavailable', 'The subscriber list is unavailable; the event will be retried.');
      return;
    }
    logger.info({ svixId: headers['svix-id'], event: event.type, reason, removed }, `Resend ${event.type}: ${removed} subscriber(s) marked ${reason}`);
    res.json({ status: 'processed', type: event.type, reason, removed });
  });

  return router;
}
