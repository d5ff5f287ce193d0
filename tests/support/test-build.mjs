// `npm test`'s first step: the typecheck of the tree, which also compiles it into the test build
// (TURNOUT_TEST_BUILD: the processes and worker threads the suites start run it), and the
// console's typecheck. The two tsc runs are independent, so they run at once: on two cores the
// console's no longer waits for the tree's. Exits non-zero if either fails, after both have ended.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const out = 'node_modules/.cache/turnout-test-build';
// A fresh build: a file deleted from the sources must not live on in it.
rmSync(path.join(root, out), { recursive: true, force: true });
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');

/** @param {string[]} args */
const run = (args) =>
  new Promise((resolve) => spawn(process.execPath, [tsc, ...args], { cwd: root, stdio: 'inherit' }).once('close', (code) => resolve(code ?? 1)));

const codes = await Promise.all([run(['-p', 'tsconfig.json', '--outDir', out]), run(['-p', 'console/tsconfig.json'])]);
process.exitCode = codes.some((c) => c !== 0) ? 1 : 0;
