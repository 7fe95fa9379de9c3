// What the Resend webhook keeps of each event it accepts, for the operator's report: the type,
// Resend's id of the message (the one the digest's ledger holds), when it happened, and the
// subscriber by id. The address itself is not stored again. Parsed apart from the route's own
// schema, which only needs what decides a removal.
import * as z from 'zod';
import type { SiteStore } from './store/types.ts';

const recordedSchema = z.object({
  type: z.string().min(1).max(100),
  created_at: z.string().optional(),
  data: z.object({ email_id: z.string().max(200).optional(), created_at: z.string().optional() }).loose().optional(),
});

function when(...candidates: (string | undefined)[]): Date | null {
  for (const candidate of candidates) {
    const date = candidate === undefined ? null : new Date(candidate);
    if (date && !Number.isNaN(date.getTime())) return date;
  }
  return null;
}

/**
 * Stores the event once per svix id, with the first of `recipients` that is a subscriber. Throws
 * when the store fails, so the webhook answers 503 and Resend delivers the event again.
 */
export async function recordEmailEvent(store: SiteStore, body: Buffer, svixId: string, svixTimestamp: string, recipients: readonly string[]): Promise<void> {
  const parsed = recordedSchema.safeParse(JSON.parse(body.toString('utf8')));
  if (!parsed.success) return;
  const event = parsed.data;
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
