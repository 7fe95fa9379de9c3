// Starts the app after the page's first paint. The server sends every page complete, so the
// app's script only adds interactivity (client-side navigation, the signup form's toasts); loading
// it after the first frame means nothing is fetched or run ahead of what the reader sees first.
// The entry's hashed path comes from the build (vite.config.ts, entryAfterFirstPaintPlugin).
(function () {
  var script = document.currentScript;
  var entry = script && script.getAttribute('data-entry');
  if (!entry) return;
  var started = false;
  function start() {
    if (started) return;
    started = true;
    var module = document.createElement('script');
    module.type = 'module';
    module.src = entry;
    // Never ahead of anything the page itself needs.
    module.fetchPriority = 'low';
    document.head.appendChild(module);
  }
  // The callback of a frame's requestAnimationFrame runs before that frame is painted; the one
  // for the next frame runs after it. A tab opened in the background gets no frames, so the
  // timer starts the app there too.
  requestAnimationFrame(function () {
    requestAnimationFrame(function () {
      setTimeout(start, 0);
    });
  });
  setTimeout(start, 1000);
})();
