// What each route puts in the document head. Routes carry a `handle.head` function; the server
// reads it to write <title>, description and canonical link, and the browser reads it to update
// the title after client-side navigation.
export interface PageHead {
  title: string;
  description: string;
  /** Whether search engines should index the page (false for 404s and errors). */
  indexable: boolean;
}

export interface RouteHandle {
  head: (data: unknown) => PageHead;
  /** HTTP status the server answers with when this route is the deepest match. */
  status?: number;
}

/** Reads the deepest matched route's head; takes React Router's matches on either side. */
export function headOf(matches: readonly { handle: unknown; data: unknown }[]): { head: PageHead; status: number } | null {
  const leaf = matches.at(-1);
  const handle = leaf?.handle as RouteHandle | undefined;
  if (!leaf || !handle) return null;
  return { head: handle.head(leaf.data), status: handle.status ?? 200 };
}
