// Readers who bring readers, over the SQL of
// supabase/migrations/20261201002010_signup_origins_and_referrals.sql: a share code's lookup and
// replacement, the operator's milestones, and the report's figures of where new readers came from.
import * as z from 'zod';
import type { CallFunction } from './call-function.ts';

/** The report's growth section: readers who became active in the weeks it covers. */
export interface GrowthReport {
  /** New active readers by week (its Monday), source (`share link`, a utm_source or ref, `import`, `direct`) and landing page. */
  weeks: { week: string; source: string; page: string | null; readers: number }[];
  /** The recap pages whose visits brought the most new readers. */
  pages: { page: string; readers: number }[];
  /** All new active readers in the weeks covered, and those a share link brought. */
  readers: number;
  referred: number;
  /** The referrers with the most credited readers, over all time (addresses: the report masks them). */
  topReferrers: { email: string; referrals: number }[];
}

export interface ReferralStore {
  /** Whether a share code belongs to a subscriber now (a replaced code does not). */
  shareCodeKnown(code: string): Promise<boolean>;
  /** Gives the subscriber a new share code and answers it; null when there is no such subscriber. */
  replaceShareCode(subscriberId: string): Promise<string | null>;
  /** REFERRAL_MILESTONES: the credited counts at which a referrer is thanked (empty: never). */
  setReferralMilestones(milestones: readonly number[]): Promise<void>;
  /** Where new readers came from, over the last `weeks` weeks. */
  growthReport(weeks: number): Promise<GrowthReport>;
}

const count = z.union([z.number(), z.string()]).transform(Number);

const growthRow = z.object({
  weeks: z.array(z.object({ week: z.string(), source: z.string(), page: z.string().nullable(), readers: count })),
  pages: z.array(z.object({ page: z.string(), readers: count })),
  readers: count,
  referred: count,
  topReferrers: z.array(z.object({ email: z.string(), referrals: count })),
});

const json = (answer: unknown) => (typeof answer === 'string' ? JSON.parse(answer) : answer);

export function referralStore(call: CallFunction): ReferralStore {
  return {
    shareCodeKnown: async (code) => (await call('share_code_known', { p_code: code })) === true,
    replaceShareCode: async (subscriberId) => z.string().nullable().parse((await call('replace_share_code', { p_id: subscriberId })) ?? null),
    async setReferralMilestones(milestones) {
      await call('referral_set_milestones', { p_milestones: [...milestones] });
    },
    growthReport: async (weeks) => growthRow.parse(json(await call('report_growth', { p_weeks: Math.max(1, Math.round(weeks)) }))),
  };
}
