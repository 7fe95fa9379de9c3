// The digest's e-mail rendered once per week and site: a pure function of the recap, whose React
// render costs more than everything else a simulated Monday does. The monday-*.test.ts files put it
// in place of server/mail/templates/render-digest.ts's prepareDigest with vi.mock; the runs themselves are unchanged.
import type * as RenderDigest from '../../server/mail/templates/render-digest.ts';

export function memoizedRendering(original: typeof RenderDigest): typeof RenderDigest {
  const rendered = new Map<string, ReturnType<typeof original.prepareDigest>>();
  return {
    ...original,
    prepareDigest(recap, siteUrl) {
      // The whole recap in the key: a worker keeps this module for the files after it (no isolation).
      const key = `${JSON.stringify(recap)}|${siteUrl}`;
      let prepared = rendered.get(key);
      if (!prepared) {
        prepared = original.prepareDigest(recap, siteUrl);
        rendered.set(key, prepared);
      }
      return prepared;
    },
  };
}
