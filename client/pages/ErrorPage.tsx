import { isRouteErrorResponse, useRouteError } from 'react-router-dom';

/**
 * Shown when rendering a page throws. In development it is the seed's router screen with the
 * error's text; in production readers get an apology and never a stack trace or internal detail.
 */
export function ErrorPage() {
  const error = useRouteError();
  if (import.meta.env.DEV) {
    const text = isRouteErrorResponse(error) ? `${error.status} ${error.statusText}` : error instanceof Error ? error.message : String(error);
    return (
      <div style={{ padding: '2rem', fontFamily: 'system-ui, sans-serif' }}>
        <h2>Unexpected Application Error!</h2>
        <h3 style={{ fontStyle: 'italic' }}>{text}</h3>
        {error instanceof Error && error.stack ? <pre style={{ whiteSpace: 'pre-wrap' }}>{error.stack}</pre> : null}
      </div>
    );
  }
  return (
    <div style={{ padding: '4rem 1rem', textAlign: 'center', fontFamily: 'system-ui, sans-serif' }}>
      <h1 style={{ fontSize: '1.75rem', fontWeight: 800 }}>Sorry, something went wrong on our side.</h1>
      <p style={{ marginTop: '0.75rem' }}>
        The page could not be shown. Please try again in a moment, or go back to the <a href="/">home page</a>.
      </p>
    </div>
  );
}
