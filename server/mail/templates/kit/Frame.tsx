// The document every e-mail is: html/head/body (React Email's, which add the doctype and the
// charset and viewport metas), the grey page and the centred white column, with the brand line at
// its top. A template passes only what is its own.
import { Body, Container, Head, Html } from '@react-email/components';
import type { ReactNode } from 'react';
import { site } from '../../../../content/site.ts';
import { frameStyles, type ColumnWidth } from './styles.ts';

export interface EmailFrameProps {
  width: ColumnWidth;
  /** Extra elements for <head> (the digest's colour-scheme metas). */
  head?: ReactNode;
  /** Hidden inbox preview text, placed before the body. */
  preview?: ReactNode;
  children: ReactNode;
}

export function EmailFrame({ width, head, preview, children }: EmailFrameProps) {
  return (
    <Html lang="en" dir="ltr">
      <Head>{head}</Head>
      {preview}
      <Body style={frameStyles.body}>
        <Container style={frameStyles.container(width)}>{children}</Container>
      </Body>
    </Html>
  );
}

/** The site's name in the brand colour, above the heading; `suffix` names the kind of e-mail. */
export function Brand({ suffix, letterSpacing }: { suffix?: string; letterSpacing?: string }) {
  return (
    <p style={frameStyles.brand(letterSpacing)}>
      {site.name}
      {suffix && ` · ${suffix}`}
    </p>
  );
}
