// Appended (--post-js) to the threaded glue: Module.unrefThreads() lets a Node process exit while the
// pthread pool's workers are alive and idle (they are worker_threads; TOOLCHAIN.md 16). The module stays
// usable: unref only stops the workers from keeping the event loop open. No-op in browsers.
Module['unrefThreads'] = function() {
  if (!ENVIRONMENT_IS_NODE) return;
  PThread.unusedWorkers.concat(PThread.runningWorkers).forEach(function(worker) { worker.unref(); });
};
