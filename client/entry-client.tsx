import './styles.css';

// The app decides where each page starts (see Layout); the browser's own restoration would fight it.
window.history.scrollRestoration = 'manual';

/** A promise that settles in a later task, so the browser can paint and answer a tap in between. */
const nextTask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * Makes the server's page interactive in short tasks. Evaluating React, the router and the app as
 * one module graph is one task, several times longer on a slow phone than on a desktop; imported
 * one after another, with the browser given the main thread between them, each is evaluated in a
 * task of its own. The later imports find the earlier modules already evaluated.
 */
async function start(root: HTMLElement, routerData: string) {
  // Named, so the bundler keeps only what the app uses of each package.
  const { hydrateRoot } = await import('react-dom/client');
  await nextTask();
  const { createBrowserRouter } = await import('react-router-dom');
  await nextTask();
  const { hydrateApp } = await import('./hydrate-app.tsx');
  await nextTask();
  await hydrateApp(root, routerData, { hydrateRoot, createBrowserRouter, yieldToBrowser: nextTask });
}

// The server writes the route data as inert JSON (no inline script, so the CSP needs no
// exception). Pages rendered without it (the error page) are left as plain HTML.
const dataElement = document.getElementById('router-data');
const root = document.getElementById('root');
if (dataElement?.textContent && root) {
  const routerData = dataElement.textContent;
  // In a task of its own, after the one that evaluated this small module.
  setTimeout(() => void start(root, routerData), 0);
}
