declare module 'virtual:recap-summaries' {
  import type { RecapSummary } from '../content/schema.ts';
  const summaries: readonly RecapSummary[];
  export default summaries;
}
