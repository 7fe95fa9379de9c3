// The inbox preview: the line an inbox shows after the subject, for the frame's `preview`.
import type { CSSProperties } from 'react';

const PREVIEW_LENGTH = 150;
const previewStyle: CSSProperties = { display: 'none', overflow: 'hidden', lineHeight: '1px', opacity: 0, maxHeight: 0, maxWidth: 0 };

/**
 * The line an inbox shows after the subject, hidden in the message itself. Padded to 150
 * characters with invisible ones (no-break space + zero-width non-joiner, the usual pair) so the
 * inbox does not run on into the first lines of the body. Shorter than React Email's Preview,
 * whose padding repeats seven such characters per step.
 */
export function Preview({ text }: { text: string }) {
  const shown = text.slice(0, PREVIEW_LENGTH);
  return (
    <div style={previewStyle} data-skip-in-text="true">
      {shown}
      {'\u00a0\u200c'.repeat(Math.max(0, PREVIEW_LENGTH - shown.length))}
    </div>
  );
}

