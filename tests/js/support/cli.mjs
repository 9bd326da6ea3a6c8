// Running bin/attnscope.mjs as a user does (child process, the environment passed through so ATTNSCOPE_SIMD picks
// the build): shared by tests/js/cli.test.js and tests/js/cli-inside.test.js.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { root } from '../helpers.js';

export const BIN = path.join(root, 'bin', 'attnscope.mjs');

/** Runs the CLI; resolves { code, stdout: Buffer, stderr: string } (never rejects on a non-zero exit). */
export function cli(args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: root, encoding: 'buffer', maxBuffer: 64 << 20, env: process.env },
      (err, stdout, stderr) => resolve({ code: err ? err.code : 0, stdout, stderr: stderr.toString('utf8') }));
  });
}

/** Runs the CLI and expects success with nothing on stderr; resolves its stdout. */
export async function ok(args) {
  const r = await cli(args);
  assert.equal(r.code, 0, `attnscope ${args.join(' ')} failed: ${r.stderr}`);
  assert.equal(r.stderr, '');
  return r.stdout;
}
