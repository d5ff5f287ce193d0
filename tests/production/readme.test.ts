import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Build, buildService, spawnTurnout, type TurnoutProcess } from '../support/process.js';

/** The README's first conversation runs as printed (only the port changes) against a real server. */
const root = path.resolve(import.meta.dirname, '../..');
const hasTools = ['curl', 'jq'].every((tool) => {
  try {
    execFileSync('sh', ['-c', `command -v ${tool}`]);
    return true;
  } catch {
    return false;
  }
});

let build: Build;
let server: TurnoutProcess | undefined;
const dir = mkdtempSync(path.join(tmpdir(), 'turnout-readme-'));
beforeAll(async () => {
  if (hasTools) build = await buildService();
}, 180_000);
afterAll(async () => {
  await server?.stop();
  build?.remove();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!hasTools)("the README's first conversation", () => {
  it('creates a team, a key and a constituent, and finds it, pasted as it is', async () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const script = readme.slice(readme.indexOf('A first conversation')).match(/```sh\n([\s\S]*?)```/)![1];
    // A generated admin token in ./data, as on a first `npm start`.
    server = await spawnTurnout(build, { env: { TURNOUT_ADMIN_TOKEN: undefined, TURNOUT_DATA_DIR: path.join(dir, 'data') } });
    const port = new URL(server.url).port;
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script.replaceAll('localhost:3000', `127.0.0.1:${port}`)], { cwd: dir });
    // curl prints the two answers back to back (no newline between them).
    expect(stdout).toMatch(/^\{"created":true,"constituent":\{"PkConstituent":\d+,"FkTeam":\d+,"FirstName":"Ada"/);
    expect(stdout).toMatch(/\{"constituents":\[\{[^\]]*"Email1":"ada@example.org"[^\]]*\}\],"page":1,"pageSize":25,"total":1\}$/);
  }, 90_000);
});
