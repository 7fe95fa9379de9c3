// A one-button message (the confirmation, the welcome, a fresh link): brand line, heading, one paragraph, the
// button, and the small print the template passes as children.
import type { ReactNode } from 'react';
import { Footer } from './Footer.tsx';
import { Brand, EmailFrame } from './Frame.tsx';
import { messageStyles as styles } from './styles.ts';

export interface ButtonMessageProps {
  heading: string;
  body: string;
  button: { href: string; label: string };
  /** The footer's contents. */
  children: ReactNode;
}

export function ButtonMessage({ heading, body, button, children }: ButtonMessageProps) {
  return (
    <EmailFrame width="560px">
      <Brand />
      <h1 style={styles.heading}>{heading}</h1>
      <p style={styles.text}>{body}</p>
      <a href={button.href} style={styles.button}>
        {button.label}
      </a>
      <Footer marginTop="24px">{children}</Footer>
    </EmailFrame>
  );
}
