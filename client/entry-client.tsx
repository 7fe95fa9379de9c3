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
function hydrate(root: HTMLElement, routerData: string) {
  const hydrationData = JSON.parse(routerData) as HydrationState;
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

if (dataElement?.textContent && root) {
  // In a task of its own: evaluating this bundle and starting the router (which reads the tab's
  // session storage and writes its history entry) are each a few milliseconds on a fast machine
  // and several times that on a slow phone; one after the other in one task, they would hold the
  // main thread long enough to delay a tap.
  const routerData = dataElement.textContent;
  setTimeout(() => hydrate(root, routerData), 0);
}
