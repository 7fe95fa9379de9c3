// The subscriber e-mails' templates and their renderer, in one module that server/mail/subscriber-mail.ts
// imports when it composes its first message: with React Email's renderer and html-to-text they
// are a large body of JavaScript that a server which sends no mail would otherwise keep resident.
export { ConfirmEmail, confirmEmailText } from './templates/ConfirmEmail.tsx';
export { renderTransactional } from './templates/render-transactional.ts';
export { FreshLinkEmail, freshLinkEmailText } from './templates/FreshLinkEmail.tsx';
export { WelcomeEmail, welcomeEmailText } from './templates/WelcomeEmail.tsx';
export { ReferralThanksEmail } from './templates/ReferralThanksEmail.tsx';
