import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { buildService } from '../support/process.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A script that appends through the built log and prints where its append landed. */
async function appendScript(dir: string): Promise<string> {
  const build = await buildService();
  const sqlite = pathToFileURL(path.join(path.dirname(build.server), '..', 'eventlog', 'sqlite.js')).href;
  return `
    const { SqliteEventLog } = await import(${JSON.stringify(sqlite)});
    const log = new SqliteEventLog(${JSON.stringify(path.join(dir, 'log.sqlite'))});
    const e = { type: 'A', data: {}, metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' } };
    const r = await log.append('s-1', [e], 'no_stream');
    console.log('appended at ' + r.position.commit + ' with ' + JSON.stringify(await log.writerSettings()));
    await log.close();`;
}

describe('the writer thread, started from the built module file', () => {
  it.each([
    { how: 'a script file, with a V8 option', args: (file: string) => ['--expose-gc', file] },
    { how: 'string input (--input-type=module -e), with a V8 option', args: (_: string, script: string) => ['--expose-gc', '--input-type=module', '-e', script] },
    { how: 'string input (--input-type module -e)', args: (_: string, script: string) => ['--input-type', 'module', '-e', script] },
  ])('commits for a process run from $how', async ({ args }) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'turnout-thread-'));
    dirs.push(dir);
    const script = await appendScript(dir);
    const file = path.join(dir, 'append.mjs');
    writeFileSync(file, script);
    const { stdout } = await promisify(execFile)(process.execPath, args(file, script), { timeout: 20_000 });
    expect(stdout.trim()).toBe('appended at 1 with {"journalMode":"wal","synchronous":2}');
  });
});
