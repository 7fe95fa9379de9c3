import { startTransition, StrictMode } from 'react';
import { hydrateRoot } from 'react-dom/client';
import { createBrowserRouter, RouterProvider, type HydrationState } from 'react-router-dom';
import { fetchedPageData } from './page-data.ts';
import { createRoutes } from './routes.tsx';
import './styles.css';

// The app decides where each page starts (see Layout); the browser's own restoration would fight it.
window.history.scrollRestoration = 'manual';

// The server writes the route data as inert JSON (no inline script, so the CSP needs no
// exception). Pages rendered without it (the error page) are left as plain HTML.
const dataElement = document.getElementById('router-data');
const root = document.getElementById('root');
if (dataElement?.textContent && root) {
  const hydrationData = JSON.parse(dataElement.textContent) as HydrationState;
  const router = createBrowserRouter(createRoutes(fetchedPageData), { hydrationData });
  // As a transition, hydration yields to the browser every few milliseconds instead of holding
  // the main thread in one long task, so the page stays responsive while it becomes interactive.
  startTransition(() => {
    hydrateRoot(
      root,
      <StrictMode>
        <RouterProvider router={router} />
      </StrictMode>,
    );
  });
}
