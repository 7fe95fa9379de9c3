// What the Resend webhook keeps of each event it accepts, for the operator's report. A digest's
// email.delivered, email.opened and email.clicked are only counted, per recap by the message's
// `recap` tag and once per svix-id (server/store/engagement.ts). Any other event is stored: the
// type, Resend's id of the message (the one the digest's ledger holds), when it happened, and the
// subscriber by id. The address itself is not stored again. Parsed apart from the route's own
// schema, which only needs what decides a removal.
import * as z from 'zod';
import { isIsoDate } from '../../content/dates.ts';
import { ENGAGEMENT_EVENTS, type EngagementEvent } from '../store/engagement.ts';
import type { SiteStore } from '../store/types.ts';

const recordedSchema = z.object({
  type: z.string().min(1).max(100),
  created_at: z.string().optional(),
  data: z.object({ email_id: z.string().max(200).optional(), created_at: z.string().optional(), tags: z.unknown().optional() }).loose().optional(),
});

// Resend gives a message's tags back as an object ({"recap": "2025-07-14"}) or as the list they
// were sent as ([{"name": "recap", "value": "2025-07-14"}]).
const tagsSchema = z.union([
  z.record(z.string(), z.unknown()),
  z.array(z.object({ name: z.string(), value: z.unknown() })).transform((list) => Object.fromEntries(list.map((tag) => [tag.name, tag.value]))),
]);

/** The recap a digest message was tagged with; null for any other message, and for a test copy. */
function digestRecapOf(tags: unknown): string | null {
  const parsed = tagsSchema.safeParse(tags);
  if (!parsed.success) return null;
  const { recap, kind } = parsed.data;
  return typeof recap === 'string' && isIsoDate(recap) && kind !== 'test' ? recap : null;
}

const isEngagement = (type: string): type is EngagementEvent => (ENGAGEMENT_EVENTS as readonly string[]).includes(type);

function when(...candidates: (string | undefined)[]): Date | null {
  for (const candidate of candidates) {
    const date = candidate === undefined ? null : new Date(candidate);
    if (date && !Number.isNaN(date.getTime())) return date;
  }
  return null;
}

/**
 * Counts a digest's delivered, opened or clicked event for its recap; stores any other event once
 * per svix id, with the first of `recipients` that is a subscriber. Throws
 * when the store fails, so the webhook answers 503 and Resend delivers the event again.
 */
export async function recordEmailEvent(store: SiteStore, body: Buffer, svixId: string, svixTimestamp: string, recipients: readonly string[]): Promise<void> {
  const parsed = recordedSchema.safeParse(JSON.parse(body.toString('utf8')));
  if (!parsed.success) return;
  const event = parsed.data;
  if (isEngagement(event.type)) {
    // Counted per recap and nothing else kept: not the message, the recipient or the subscriber.
    const recapDate = digestRecapOf(event.data?.tags);
    if (recapDate) await store.countEmailEngagement({ svixId, type: event.type, recapDate, receivedAt: new Date(Number(svixTimestamp) * 1000) });
    return;
  }
  let subscriberId: string | null = null;
  for (const email of recipients) {
    subscriberId = (await store.findSubscriberByEmail(email))?.id ?? null;
    if (subscriberId) break;
  }
  await store.recordEmailEvent({
    svixId,
    type: event.type,
    providerMessageId: event.data?.email_id ?? null,
    subscriberId,
    occurredAt: when(event.created_at, event.data?.created_at) ?? new Date(Number(svixTimestamp) * 1000),
  });
}
