// The look every e-mail shares: one font stack, one palette, the page and the white column, the
// brand line and the small print. Inline styles only (no web fonts, no <style>, no images): what
// Gmail, Outlook and Apple Mail all keep. A template adds its own styles from `colors` and
// `fontFamily`, so the three e-mails cannot drift apart in colour or type.
import type { CSSProperties } from 'react';

export const fontFamily = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif";
export const colors = { brand: '#c0265c', ink: '#18181b', muted: '#52525b', surface: '#fafaf9', line: '#e4e4e7', page: '#f4f4f5', marker: '#16a34a' };

/** A column width: 600px for the digest's list, 560px for a one-button message. */
export type ColumnWidth = '560px' | '600px';

export const frameStyles = {
  body: { backgroundColor: colors.page, margin: 0, padding: '24px 0', fontFamily, color: colors.ink },
  container: (maxWidth: ColumnWidth): CSSProperties => ({ maxWidth, width: '100%', margin: '0 auto', backgroundColor: '#ffffff', borderRadius: '12px', padding: '32px 24px' }),
  brand: (letterSpacing?: string): CSSProperties => ({ margin: 0, fontSize: '14px', fontWeight: 700, ...(letterSpacing ? { letterSpacing } : {}), color: colors.marker }),
  /** The small print; `marginTop` is the gap above it (less under a rule). */
  footer: (marginTop: string): CSSProperties => ({ margin: `${marginTop} 0 0`, fontSize: '13px', lineHeight: '20px', color: colors.muted }),
  footerLink: { color: colors.muted, textDecoration: 'underline' },
} satisfies Record<string, CSSProperties | ((...args: never[]) => CSSProperties)>;

/** A one-button message (confirm, welcome): a heading, a paragraph, the button. */
export const messageStyles = {
  heading: { margin: '8px 0 0', fontSize: '24px', lineHeight: '30px', fontWeight: 800 },
  text: { margin: '16px 0 0', fontSize: '16px', lineHeight: '26px' },
  button: { display: 'inline-block', marginTop: '24px', padding: '12px 20px', borderRadius: '8px', backgroundColor: colors.ink, color: '#ffffff', fontWeight: 700, textDecoration: 'none' },
} satisfies Record<string, CSSProperties>;
