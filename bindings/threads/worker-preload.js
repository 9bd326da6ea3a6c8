// attnscope (bindings/threads/worker-preload.js): a pool worker started with #glue=<URL> imports the glue at once.
(function () {
  if (typeof location !== 'object' || location === null || typeof location.hash !== 'string') return;
  var named = /^#glue=(.+)$/.exec(location.hash);
  if (named) import(decodeURIComponent(named[1])).catch(function () {});
})();
