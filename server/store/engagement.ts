// What the store keeps of readers' engagement (supabase/migrations/20261128003010_clicks_and_engagement.sql):
// the site's own count of the e-mail's /go/ links per recap and entry, and Resend's delivered,
// opened and clicked events counted per recap. Counts only: no row names a reader.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

/** The e-mail events counted per recap; every other event type keeps its own handling. */
export const ENGAGEMENT_EVENTS = ['email.delivered', 'email.opened', 'email.clicked'] as const;
export type EngagementEvent = (typeof ENGAGEMENT_EVENTS)[number];

export interface LinkClick {
  recapDate: string;
  /** '1'..'10' for the launches by rank, 'page' for the recap's page on the site. */
  entry: string;
  /** A keyed hash of the client's address, recap and entry: repeats of it within the window count once. */
  clickKey: string;
  at: Date;
  windowSeconds: number;
}

export interface EngagementCounts {
  clicks: { recapDate: string; entry: string; clicks: number }[];
  events: { recapDate: string; type: EngagementEvent; events: number }[];
}

export interface EngagementStore {
  /** Counts a click unless its key was counted within the window; true when it counted. */
  recordLinkClick(click: LinkClick): Promise<boolean>;
  /** Counts one webhook delivery (by its svix-id, once) of an engagement event for a recap; true when it counted. */
  countEmailEngagement(event: { svixId: string; type: EngagementEvent; recapDate: string; receivedAt: Date }): Promise<boolean>;
  engagementCounts(): Promise<EngagementCounts>;
  /** Housekeeping: removes the click window's rows that expired at or before `at`; how many went. */
  pruneLinkClickWindow(at: Date): Promise<number>;
}

const count = z.coerce.number().int().nonnegative();
const countsSchema = z.object({
  clicks: z.array(z.object({ recapDate: z.string(), entry: z.string(), clicks: count })),
  events: z.array(z.object({ recapDate: z.string(), type: z.enum(ENGAGEMENT_EVENTS), events: count })),
});

export function engagementStore(call: CallFunction): EngagementStore {
  return {
    async recordLinkClick(click) {
      const answer = await call('record_link_click', {
        p_recap_date: click.recapDate,
        p_entry: click.entry,
        p_click_key: click.clickKey,
        p_at: click.at.toISOString(),
        p_window_seconds: click.windowSeconds,
      });
      return answer === true;
    },
    async countEmailEngagement(event) {
      const answer = await call('record_email_engagement', {
        p_svix_id: event.svixId,
        p_event_type: event.type,
        p_recap_date: event.recapDate,
        p_received_at: event.receivedAt.toISOString(),
      });
      return answer === true;
    },
    async engagementCounts() {
      const answer = await call('report_engagement', {});
      return countsSchema.parse(typeof answer === 'string' ? JSON.parse(answer) : answer);
    },
    async pruneLinkClickWindow(at) {
      return count.parse(await call('prune_link_click_window', { p_at: at.toISOString() }));
    },
  };
}
