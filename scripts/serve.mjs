// A static file server for build/site on 127.0.0.1 (Node's http only). Sends .wasm as application/wasm
// and .mjs/.js/.cjs as text/javascript (TOOLCHAIN.md 13). `--port N` (0 picks a free port); prints the URL.
// Every response carries COOP same-origin + COEP require-corp, so pages are cross-origin isolated and
// attnscope can load its threaded build (TOOLCHAIN.md 16); everything is same-origin, so nothing breaks.
// Also used by the browser tests (import { startServer }).
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json', '.wasm': 'application/wasm', '.bpe': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.ico': 'image/x-icon', '.txt': 'text/plain; charset=utf-8',
};

export function startServer({ root, port = 0, host = '127.0.0.1' } = {}) {
  const base = path.resolve(root);
  const server = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://localhost');
      let file = path.resolve(base, `.${decodeURIComponent(url.pathname)}`);
      if (file !== base && !file.startsWith(base + path.sep)) throw Object.assign(new Error('outside'), { code: 'ENOENT' });
      if ((await stat(file)).isDirectory()) {
        if (!url.pathname.endsWith('/')) {
          res.writeHead(301, { Location: `${url.pathname}/` }).end();
          return;
        }
        file = path.join(file, 'index.html');
      }
      // no-cache + validators, as a static host sends them: a browser asks again on every visit and an unchanged
      // file answers 304, which keeps its cache entry — and the compiled code Chromium stores beside a streamed
      // .wasm or a script (a fresh 200 would replace the entry and drop that code)
      const info = await stat(file);
      const etag = `"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}"`;
      const headers = {
        'Cache-Control': 'no-cache',
        ETag: etag,
        'Last-Modified': info.mtime.toUTCString(),
        'X-Content-Type-Options': 'nosniff',
        'Cross-Origin-Opener-Policy': 'same-origin',
        'Cross-Origin-Embedder-Policy': 'require-corp',
      };
      if (req.headers['if-none-match'] === etag) {
        res.writeHead(304, headers).end();
        return;
      }
      const body = await readFile(file);
      res.writeHead(200, { 'Content-Type': TYPES[path.extname(file)] ?? 'application/octet-stream', ...headers });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (e) {
      res.writeHead(e.code === 'ENOENT' || e.code === 'ENOTDIR' ? 404 : 500, { 'Content-Type': 'text/plain' });
      res.end(e.code === 'ENOENT' || e.code === 'ENOTDIR' ? 'not found\n' : 'server error\n');
    }
  });
  return new Promise((resolve) => {
    server.listen(port, host, () => resolve({ server, url: `http://${host}:${server.address().port}/` }));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const i = process.argv.indexOf('--port');
  const port = i > 0 ? Number(process.argv[i + 1]) : 8080;
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'build', 'site');
  const { url } = await startServer({ root, port });
  console.log(`attnscope: serving ${path.relative(process.cwd(), root) || root} at ${url}web/  (Ctrl-C to stop)`);
}
