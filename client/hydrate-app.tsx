import { startTransition, StrictMode } from 'react';
import type { hydrateRoot as HydrateRoot } from 'react-dom/client';
import { RouterProvider, type createBrowserRouter as CreateBrowserRouter, type HydrationState } from 'react-router-dom';
import { fetchedPageData } from './fetch-page-data.ts';
import { createRoutes } from './routes.tsx';

export interface HydrationSteps {
  hydrateRoot: typeof HydrateRoot;
  createBrowserRouter: typeof CreateBrowserRouter;
  /** Settles in a later task: the browser paints and answers input in between. */
  yieldToBrowser: () => Promise<void>;
}

/**
 * Hydrates the server's page with the route data it came with. Starting the router (it reads the
 * tab's session storage and writes its history entry) and hydrating are separate tasks.
 */
export async function hydrateApp(root: HTMLElement, routerData: string, { hydrateRoot, createBrowserRouter, yieldToBrowser }: HydrationSteps): Promise<void> {
  const hydrationData = JSON.parse(routerData) as HydrationState;
  const router = createBrowserRouter(createRoutes(fetchedPageData), { hydrationData });
  await yieldToBrowser();
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
