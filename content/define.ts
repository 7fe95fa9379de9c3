// The helper each week's file exports its recap through. It lives apart from schema.ts so a week
// file imports only a type from the schema: the browser loads a week's text without zod.
import type { Recap } from './schema.ts';

/**
 * Typed identity: the editor gets completion and type errors while writing, and the validator
 * (content/validate.ts) checks the plain object that comes out.
 */
export function defineRecap(recap: Recap): Recap {
  return recap;
}
