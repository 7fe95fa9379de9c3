// The before/after table of a `--before REF` run: one row per figure, the before tree's, this
// tree's and their ratio (below 1 means the after tree is smaller, or faster when it is a time).
import type { Tree } from './tree.ts';

export interface Compared {
  what: string;
  before: number;
  after: number;
  unit?: string;
  /** Decimals shown (default 0). */
  digits?: number;
}

export function comparisonTable(before: Tree, rows: readonly Compared[]): string {
  const shown = (row: Compared, value: number) => `${value.toLocaleString('en-US', { minimumFractionDigits: row.digits ?? 0, maximumFractionDigits: row.digits ?? 0 })}${row.unit ? ` ${row.unit}` : ''}`;
  return `| | before (${before.ref}) | after | after/before |
|---|---|---|---|
${rows.map((row) => `| ${row.what} | ${shown(row, row.before)} | ${shown(row, row.after)} | ${row.before === 0 ? '–' : (row.after / row.before).toFixed(2)} |`).join('\n')}`;
}

/** The `Command:` line's command, naming `--before REF` when there was one. */
export function benchCommand(command: string, before?: Tree): string {
  return before ? `${command} --before ${before.ref}` : command;
}
