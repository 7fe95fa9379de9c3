// The pre-send checks applied to the digest's rendering: one copy is personalised with an
// unsubscribe link as long as a real one and checked. The digest job calls `presendHook` through
// its preSend option (after the recap is chosen and rendered, before anything is sent, a test copy
// included); validate-content and the report call `checkRecap`.
import type { Recap } from '../../../content/schema.ts';
import { weekLabel } from '../../../content/text.ts';
import { personalizeTemplate, prepareDigest, type RenderedEmail } from '../templates/render-digest.ts';
import { createUnsubscribeToken, unsubscribeUrlFor } from '../../subscribers/signed-links.ts';
import { presendRefusal, runPresendChecks, type CheckResult } from './presend-checks.ts';
import type { DigestOptions } from './run.ts';

// A uuid-sized id signed with a throwaway key: the link has a real one's length, and can
// unsubscribe nobody.
const SAMPLE_ID = '00000000-0000-4000-8000-000000000000';
const SAMPLE_SECRET = 'presend-check-sample-secret-not-used-for-mail';

/** The checks on a rendering whose unsubscribe links are still the template's marker. */
export function checkTemplate(recap: Recap, template: RenderedEmail, siteUrl: string, production: boolean): CheckResult[] {
  const copy = personalizeTemplate(template, unsubscribeUrlFor(siteUrl, createUnsubscribeToken(SAMPLE_ID, SAMPLE_SECRET)));
  return runPresendChecks({ recap, subject: copy.subject, html: copy.html, text: copy.text, siteUrl, production });
}

export async function checkRecap(recap: Recap, siteUrl: string, production: boolean): Promise<CheckResult[]> {
  return checkTemplate(recap, (await prepareDigest(recap, siteUrl)).template, siteUrl, production);
}

/** The digest's preSend: the refusal naming the recap, check and fix, or null; warnings are logged. */
export function presendHook(options: { production: boolean; log?: { warn(message: string): void } }): NonNullable<DigestOptions['preSend']> {
  return async ({ recap, content }) => {
    const results = checkTemplate(recap, { subject: content.subject, html: content.html, text: content.bodyText }, content.siteUrl, options.production);
    for (const result of results) {
      if (result.status === 'warn') options.log?.warn(`${result.title}: ${result.detail} ${result.fix ?? ''}`.trim());
    }
    return presendRefusal(weekLabel(recap.date), results);
  };
}
