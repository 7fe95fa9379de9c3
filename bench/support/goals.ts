// The goals a benchmark is held to (what readers and operators feel), printed as one line
// each with "met" or "not met", so a run says itself whether it passed.

export interface Goal {
  /** What is measured, e.g. "p99 of signups". */
  what: string;
  value: number;
  /** At most (`≤`), under (`<`) or at least (`≥`) the target. */
  is: '≤' | '<' | '≥';
  target: number;
  unit?: string;
}

export function goalMet(goal: Goal): boolean {
  if (goal.is === '≤') return goal.value <= goal.target;
  if (goal.is === '<') return goal.value < goal.target;
  return goal.value >= goal.target;
}

const figure = (value: number) => (Number.isInteger(value) ? value.toLocaleString('en-US') : value.toLocaleString('en-US', { maximumFractionDigits: 2 }));

/** A markdown list: `- what: value unit (goal ≤ target unit): met`. */
export function goalLines(goals: readonly Goal[]): string {
  return goals
    .map((goal) => {
      const unit = goal.unit ? ` ${goal.unit}` : '';
      return `- ${goal.what}: ${figure(goal.value)}${unit} (goal ${goal.is} ${figure(goal.target)}${unit}): **${goalMet(goal) ? 'met' : 'not met'}**`;
    })
    .join('\n');
}
