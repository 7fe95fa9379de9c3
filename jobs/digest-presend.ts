// The pre-send checks applied to a prepared digest: one copy is personalised with an unsubscribe
// link as long as a real one, checked, and either let through (warnings logged) or refused.
import type { Recap } from '../content/schema.ts';
import { prepareDigest, type PreparedDigest } from '../emails/render-digest.ts';
import { createUnsubscribeToken, unsubscribeUrlFor } from '../server/unsubscribe-token.ts';
import { presendRefusal, runPresendChecks, type CheckResult } from './presend-checks.ts';

// A uuid-sized id signed with a throwaway key: the link has a real one's length, and can
// unsubscribe nobody.
const SAMPLE_ID = '00000000-0000-4000-8000-000000000000';
const SAMPLE_SECRET = 'presend-check-sample-secret-not-used-for-mail';

export function checkPreparedDigest(digest: PreparedDigest, siteUrl: string, production: boolean): CheckResult[] {
  const copy = digest.personalize(unsubscribeUrlFor(siteUrl, createUnsubscribeToken(SAMPLE_ID, SAMPLE_SECRET)));
  return runPresendChecks({ recap: digest.recap, subject: copy.subject, html: copy.html, text: copy.text, siteUrl, production });
}

export async function checkRecap(recap: Recap, siteUrl: string, production: boolean): Promise<CheckResult[]> {
  return checkPreparedDigest(await prepareDigest(recap, siteUrl), siteUrl, production);
}

/** The refusal message when a check failed, else null; warnings go to the log. */
export function presendGate(
  digest: PreparedDigest,
  options: { siteUrl: string; production?: boolean; label: string; log?: { warn(message: string): void } },
): string | null {
  const results = checkPreparedDigest(digest, options.siteUrl, options.production ?? false);
  for (const result of results) {
    if (result.status === 'warn') options.log?.warn(`${result.title}: ${result.detail} ${result.fix ?? ''}`.trim());
  }
  return presendRefusal(options.label, results);
}
