// Facts about the 24 published weeks (February 2 to July 14, 2025) that the product specification
// states. They pin the sample data to the specification; weeks added later are checked only by the
// general rules in schema.ts and validate.ts.

/** The 24 weeks of the specification's route list, oldest first. */
export const SEED_WEEKS = [
  '2025-02-02', '2025-02-09', '2025-02-16', '2025-02-23',
  '2025-03-02', '2025-03-09', '2025-03-16', '2025-03-23', '2025-03-30',
  '2025-04-06', '2025-04-13', '2025-04-20', '2025-04-27',
  '2025-05-04', '2025-05-11', '2025-05-18', '2025-05-25',
  '2025-06-01', '2025-06-09', '2025-06-16', '2025-06-23', '2025-06-30',
  '2025-07-06', '2025-07-14',
] as const;

/**
 * Gaps between consecutive weeks other than the usual 7 days, keyed by the later week. The
 * specification names two 8-day gaps (Jun 1 → Jun 9, Jul 6 → Jul 14); its route list also puts
 * Jul 6 six days after Jun 30, which its prose does not mention. The routes are published
 * addresses, so the list wins. A curator who skips a week adds the gap here.
 */
export const IRREGULAR_GAPS: Readonly<Record<string, number>> = {
  '2025-06-09': 8,
  '2025-07-06': 6,
  '2025-07-14': 8,
};

/** Headlines the specification quotes (seed §2). Feb 2, 9 and 16 are ours to write. */
export const SEED_HEADLINES: Readonly<Record<string, string>> = {
  '2025-02-23': 'Career Tools and Creative Solutions Lead the Pack',
  '2025-03-02': 'AI Tools Take the Spotlight',
  '2025-03-09': 'Productivity Meets Personal Care',
  '2025-03-16': 'AI Tools and Creative Platforms Take the Lead',
  '2025-03-23': 'Community, Learning, and AI Innovation Unite',
  '2025-03-30': 'Developer Tools and AI Innovation Take Center Stage',
  '2025-04-06': 'When Robots Became Renaissance Artists',
  '2025-04-13': 'Productivity Tools Rule the Week',
  '2025-04-20': 'Scaling Up While Staying Zen',
  '2025-04-27': 'Utility Tools and Travel Dominate',
  '2025-05-04': 'Practical Tools Meet Creative Passions',
  '2025-05-11': 'Romance Meets Innovation',
  '2025-05-18': 'Creative Tools and Practical Solutions',
  '2025-05-25': 'AI Tools and Personal Productivity Reign Supreme',
  '2025-06-01': 'Team Productivity and Creative Innovation Take Center Stage',
  '2025-06-09': 'Security Tools and Creative Platforms Lead the Charge',
  '2025-06-16': 'Business Tools and Global Innovation Take Center Stage',
  '2025-06-23': 'Social Platforms and Professional Development Take the Spotlight',
  '2025-06-30': 'Food Planning and Creative Tools Take the Lead',
  '2025-07-06': 'Data & Automation Tools Lead the Innovation Wave',
  '2025-07-14': 'Data & Automation Tools Lead the Innovation Wave',
};

/**
 * Upvote ranges per page (seed §9): the entry at `fromRank` has exactly `highest` upvotes and #10
 * has exactly `lowest`. May 4 states only its tail, #4 to #10.
 */
export const SEED_UPVOTE_RANGES: Readonly<Record<string, { fromRank: number; highest: number; lowest: number }>> = {
  '2025-05-04': { fromRank: 4, highest: 14, lowest: 5 },
  '2025-05-11': { fromRank: 1, highest: 46, lowest: 3 },
  '2025-05-18': { fromRank: 1, highest: 89, lowest: 21 },
  '2025-05-25': { fromRank: 1, highest: 65, lowest: 6 },
  '2025-06-01': { fromRank: 1, highest: 20, lowest: 6 },
  '2025-06-09': { fromRank: 1, highest: 15, lowest: 2 },
  '2025-06-16': { fromRank: 1, highest: 13, lowest: 4 },
  '2025-06-23': { fromRank: 1, highest: 70, lowest: 3 },
  '2025-06-30': { fromRank: 1, highest: 48, lowest: 5 },
  '2025-07-06': { fromRank: 1, highest: 92, lowest: 19 },
  '2025-07-14': { fromRank: 1, highest: 74, lowest: 19 },
};

/** Across the 24 weeks upvotes run from 2 to 914: both ends are reached. */
export const SEED_UPVOTE_BOUNDS = { lowest: 2, highest: 914 } as const;
