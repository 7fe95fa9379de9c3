// What a batch sends, as data: one stored rendering per recap, sender, site and signing secret
// (the template with a marker for the unsubscribe link), and the messages built from it. A pending
// batch names its rendering by hash, so a rerun resends exactly what was first sent, even after
// the recap text, MAIL_FROM or SITE_URL changed.
import { createHash } from 'node:crypto';
import { personalizeTemplate, type PreparedDigest } from '../../emails/render-digest.ts';
import type { OutgoingMessage } from '../../server/mail/types.ts';
import type { DigestContent, Subscriber } from '../../server/store/types.ts';
import { createUnsubscribeToken, unsubscribeUrlFor } from '../../server/unsubscribe-token.ts';

const sha256 = (...parts: string[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part).update('\0');
  return hash.digest('hex');
};

/** Says whether links signed now would match a stored rendering's, without storing the secret. */
export const secretFingerprint = (secret: string) => sha256('unsubscribe-secret', secret).slice(0, 16);

/** The rendering of a prepared recap for this sender, site and secret, named by its hash. */
export function digestContentOf(prepared: PreparedDigest, sender: string, siteUrl: string, unsubscribeSecret: string): DigestContent {
  const fingerprint = secretFingerprint(unsubscribeSecret);
  const { subject, html, text } = prepared.template;
  return {
    contentHash: sha256(prepared.recap.date, sender, siteUrl, fingerprint, subject, html, text),
    recapDate: prepared.recap.date,
    sender,
    siteUrl,
    secretFingerprint: fingerprint,
    subject,
    html,
    bodyText: text,
  };
}

/** One subscriber's message from a rendering; the same inputs always give the same message. */
export function messageFrom(content: DigestContent, subscriber: Subscriber, unsubscribeSecret: string, subjectPrefix = ''): OutgoingMessage {
  const url = unsubscribeUrlFor(content.siteUrl, createUnsubscribeToken(subscriber.id, unsubscribeSecret));
  const copy = personalizeTemplate({ subject: content.subject, html: content.html, text: content.bodyText }, url);
  return {
    to: subscriber.email,
    from: content.sender,
    subject: `${subjectPrefix}${copy.subject}`,
    html: copy.html,
    text: copy.text,
    // RFC 8058 one-click: mail clients show an unsubscribe button that POSTs to this URL.
    headers: { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    tags: { recap: content.recapDate, kind: subjectPrefix ? 'test' : 'digest' },
  };
}

/**
 * A stored batch's messages, rebuilt in its order; or why they cannot be: the rendering is gone,
 * the links were signed with another secret, or a recipient's row was deleted.
 */
export function rebuildMessages(
  content: DigestContent | null,
  subscriberIds: readonly string[],
  recipients: readonly Subscriber[],
  unsubscribeSecret: string,
): { messages: OutgoingMessage[] } | { problem: string } {
  if (!content) return { problem: 'its stored content is missing' };
  if (content.secretFingerprint !== secretFingerprint(unsubscribeSecret)) {
    return { problem: 'UNSUBSCRIBE_SECRET changed since it was written, so its unsubscribe links cannot be rebuilt' };
  }
  const byId = new Map(recipients.map((r) => [r.id, r]));
  const missing = subscriberIds.filter((id) => !byId.has(id)).length;
  if (missing > 0) return { problem: `${missing} of its recipients were deleted since it was written` };
  return { messages: subscriberIds.map((id) => messageFrom(content, byId.get(id)!, unsubscribeSecret)) };
}
