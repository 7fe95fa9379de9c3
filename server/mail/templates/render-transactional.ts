// The one-off e-mails a subscriber gets outside the Monday digest (confirmation, welcome):
// rendered per message, HTML and plain text, in the digest's one-byte form.
import { render } from '@react-email/components';
import { createElement, type FunctionComponent } from 'react';
import { plainTextSpelling, toLatin1Html, type RenderedEmail } from './render-digest.ts';

const plainTextOptions = {
  plainText: true,
  htmlToTextOptions: { selectors: ['h1', 'h2', 'h3'].map((selector) => ({ selector, options: { uppercase: false } })) },
} as const;

export async function renderTransactional<Props extends object>(component: FunctionComponent<Props>, props: Props, subject: string): Promise<RenderedEmail> {
  const element = createElement(component, props);
  const [html, text] = await Promise.all([render(element), render(element, plainTextOptions)]);
  return { subject, html: toLatin1Html(html), text: plainTextSpelling(text) };
}
