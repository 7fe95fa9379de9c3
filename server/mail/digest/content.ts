// What a batch sends, as data: one stored rendering per recap, sender, site and signing secret
// (the template with a marker for the unsubscribe link), and the messages built from it. A pending
// batch names its rendering by hash, so a rerun resends exactly what was first sent, even after
// the recap text, MAIL_FROM or SITE_URL changed.
import { createHash } from 'node:crypto';
import { personalizeTemplate, type PreparedDigest } from '../templates/render-digest.ts';
import { wholeMessage } from '../template.ts';
import type { BatchMessage, MessageTemplate, OutgoingMessage, PreparedTemplate, TemplatedMessage } from '../types.ts';
import type { DigestContent, Subscriber } from '../../store/types.ts';
import { createUnsubscribeToken, unsubscribeUrlFor } from '../../subscribers/signed-links.ts';
import { shareLinkPath } from '../../subscribers/share-codes.ts';

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

/** What every copy carries besides its body: its address, sender, one-click unsubscribe headers and tags. */
function envelopeOf(content: DigestContent, subscriber: Subscriber, unsubscribeUrl: string, kind: 'digest' | 'test') {
  return {
    to: subscriber.email,
    from: content.sender,
    // RFC 8058 one-click: mail clients show an unsubscribe button that POSTs to this URL.
    headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
    tags: { recap: content.recapDate, kind },
  };
}

/** The subscriber's share link; undefined (the site's home page) for an address with no code. */
const shareUrlOf = (siteUrl: string, subscriber: Subscriber) => (subscriber.shareCode ? `${siteUrl.replace(/\/+$/, '')}${shareLinkPath(subscriber.shareCode)}` : undefined);

/** One subscriber's message from a rendering; the same inputs always give the same message. */
export function messageFrom(content: DigestContent, subscriber: Subscriber, unsubscribeSecret: string, subjectPrefix = ''): OutgoingMessage {
  const url = unsubscribeUrlFor(content.siteUrl, createUnsubscribeToken(subscriber.id, unsubscribeSecret));
  const copy = personalizeTemplate({ subject: content.subject, html: content.html, text: content.bodyText }, url, shareUrlOf(content.siteUrl, subscriber));
  return { ...envelopeOf(content, subscriber, url, subjectPrefix ? 'test' : 'digest'), subject: `${subjectPrefix}${copy.subject}`, html: copy.html, text: copy.text };
}

/** Builds each subscriber's message of a rendering: through the prepared template when there is one, else whole. */
export function messageMaker(content: DigestContent, template: PreparedTemplate | null, unsubscribeSecret: string): (subscriber: Subscriber) => BatchMessage {
  // A copy without a share code (none in the database that wrote the batch) is sent whole, with the
  // site's home page in its share line: the template's placeholder needs a code.
  return template ? (s) => (s.shareCode ? templatedMessageFrom(content, template, s, unsubscribeSecret) : messageFrom(content, s, unsubscribeSecret)) : (s) => messageFrom(content, s, unsubscribeSecret);
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
  template: PreparedTemplate | null = null,
): { messages: BatchMessage[] } | { problem: string } {
  if (!content) return { problem: 'its stored content is missing' };
  if (content.secretFingerprint !== secretFingerprint(unsubscribeSecret)) {
    return { problem: 'UNSUBSCRIBE_SECRET changed since it was written, so its unsubscribe links cannot be rebuilt' };
  }
  const byId = new Map(recipients.map((r) => [r.id, r]));
  const missing = subscriberIds.filter((id) => !byId.has(id)).length;
  if (missing > 0) return { problem: `${missing} of its recipients were deleted since it was written` };
  const build = messageMaker(content, template, unsubscribeSecret);
  return { messages: subscriberIds.map((id) => build(byId.get(id)!)) };
}

/**
 * A stored batch less those who left since it was written (no longer active): the ids still on the
 * list, in the batch's order, and `keep` to filter anything built in that order (its messages).
 */
export function stillOnTheList(subscriberIds: readonly string[], recipients: readonly (Subscriber & { active: boolean })[]) {
  const active = new Set(recipients.filter((r) => r.active).map((r) => r.id));
  const staying = subscriberIds.map((id) => active.has(id));
  return {
    ids: subscriberIds.filter((_, i) => staying[i]),
    left: staying.filter((stays) => !stays).length,
    keep: <T>(items: readonly T[]) => items.filter((_, i) => staying[i]),
  };
}

// Sending through a shared template: every copy differs only in its link token (the unsubscribe
// and the subscription page's links carry the same one), so the template is the stored rendering
// with both links filled in for a token marker, and the marker then made the placeholder.
const TOKEN_VARIABLE = 'LINK_TOKEN';
const TOKEN_MARKER = 'LWDIGESTLINKTOKENMARKER';
// The share link's code is the second variable: 16 hex digits, unchanged by links and escaping.
const SHARE_VARIABLE = 'SHARE_CODE';
const SHARE_MARKER = 'LWDIGESTSHARECODEMARKER';

/**
 * The shared template for a stored rendering, or null when one cannot stand for it exactly: the
 * content has braces a provider could read as its own placeholders, or a copy filled from the
 * template would differ from the copy rendered whole (a site address the link builder rewrites).
 */
export function digestTemplateOf(content: DigestContent): MessageTemplate | null {
  if ([content.subject, content.html, content.bodyText].some((part) => part.includes('{{') || part.includes('}}'))) return null;
  const marked = personalizeTemplate(
    { subject: content.subject, html: content.html, text: content.bodyText },
    unsubscribeUrlFor(content.siteUrl, TOKEN_MARKER),
    shareUrlOf(content.siteUrl, { id: 'template', email: 'template@example.com', shareCode: SHARE_MARKER }),
  );
  const placeholder = `{{{${TOKEN_VARIABLE}}}}`;
  const sharePlaceholder = `{{{${SHARE_VARIABLE}}}}`;
  const template: MessageTemplate = {
    alias: `launched-weekly-digest-${content.recapDate}-${content.contentHash.slice(0, 16)}`,
    name: `Launched Weekly digest ${content.recapDate} (${content.contentHash.slice(0, 8)})`,
    subject: content.subject,
    html: marked.html.replaceAll(TOKEN_MARKER, placeholder).replaceAll(SHARE_MARKER, sharePlaceholder),
    text: marked.text.replaceAll(TOKEN_MARKER, placeholder).replaceAll(SHARE_MARKER, sharePlaceholder),
    variables: [TOKEN_VARIABLE, SHARE_VARIABLE],
  };
  // A token is letters, digits, '-', '_' and '.': nothing a link or HTML escaping changes. Check one.
  const probe: Subscriber = { id: 'template-check', email: 'check@example.com', shareCode: '0123456789abcdef' };
  const whole = messageFrom(content, probe, 'template-check');
  const filled = wholeMessage(templatedMessageFrom(content, { ...template, id: template.alias }, probe, 'template-check'));
  return whole.html === filled.html && whole.text === filled.text ? template : null;
}

/** One subscriber's message through the prepared template: the same envelope as messageFrom's. */
export function templatedMessageFrom(content: DigestContent, template: PreparedTemplate, subscriber: Subscriber, unsubscribeSecret: string): TemplatedMessage {
  const token = createUnsubscribeToken(subscriber.id, unsubscribeSecret);
  const url = unsubscribeUrlFor(content.siteUrl, token);
  return { ...envelopeOf(content, subscriber, url, 'digest'), subject: content.subject, template, variables: { [TOKEN_VARIABLE]: encodeURIComponent(token), [SHARE_VARIABLE]: subscriber.shareCode ?? '' } };
}
