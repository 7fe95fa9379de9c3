// The simulation's weeks: one recap per Monday of the stretch, each a copy of a real recap under
// its own date, public from the Sunday before at noon UTC, so every schedule the scenarios choose
// (Monday or Tuesday mornings in any of their time zones) finds it public and fresh at its tick.
import { recapPathFor } from '../../content/dates.ts';
import { recaps as realRecaps } from '../../content/index.ts';
import type { Recap } from '../../content/schema.ts';

const DAY_MS = 86_400_000;

export const isoDay = (at: Date) => at.toISOString().slice(0, 10);

export function simulatedRecaps(firstMonday: Date, weeks: number): Recap[] {
  const model = realRecaps[0]!;
  return Array.from({ length: weeks }, (_, week) => {
    const monday = new Date(firstMonday.getTime() + week * 7 * DAY_MS);
    const date = isoDay(monday);
    const publishAt = new Date(monday.getTime() - 12 * 60 * 60 * 1000).toISOString().replace('.000Z', 'Z');
    return { ...model, date, path: recapPathFor(date), publishAt, headline: `${model.headline} (${date})` };
  });
}
