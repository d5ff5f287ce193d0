import { existsSync } from 'node:fs';
import { heartbeat } from './heartbeat.js';
import os from 'node:os';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DataDirBusy, PrepareBusy } from '../runtime/datadir-lock.js';
import { ErasureUnderway } from '../runtime/erasure-journal.js';
import { prepareReadModels } from '../runtime/prepare.js';
import { LOG_FILE } from '../runtime/read-models.js';
import { rebuildReadModels } from '../runtime/rebuild.js';
import { dropUnusedAt } from '../runtime/drop-unused.js';
import { AdminClient } from './client.js';
import { CommandFailed, EXIT } from './errors.js';
import { type Progress, startProgress } from './progress.js';

type Out = (line: string) => void;

async function withClient<T>(use: (client: AdminClient) => Promise<T>): Promise<T> {
  const client = AdminClient.fromEnv();
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** `teams create --name NAME`: prints `{"team": {...}}`. */
export const createTeam = (name: string, out: Out) =>
  withClient(async (client) => {
    out(JSON.stringify(await client.expect('POST', '/teams', { name })));
    return EXIT.done;
  });

/** `keys create`: the key's record, then the key alone on the last line (its only showing). */
export const createKey = (team: number, name: string, scope: string, out: Out) =>
  withClient(async (client) => {
    const { apiKey, key } = await client.expect('POST', `/teams/${team}/api-keys`, { name, scope });
    out(JSON.stringify({ apiKey }));
    out(key);
    return EXIT.done;
  });

/** `erase` (decisions.md §17): prints {"erased": {PkConstituent, erasedAt}} once nothing of the person remains. */
export const eraseConstituent = (team: number, constituent: number, reason: string | undefined, out: Out) =>
  withClient(async (client) => {
    out(JSON.stringify(await client.expect('POST', `/teams/${team}/constituents/${constituent}/erase`, reason === undefined ? {} : { reason })));
    return EXIT.done;
  });

/** `export`: the team's envelopes as NDJSON on stdout, streamed as the server sends them. */
export const exportTeam = (team: number, options: { from?: string; types?: string }) =>
  withClient(async (client) => {
    const query = new URLSearchParams();
    if (options.from !== undefined) query.set('from', options.from);
    if (options.types !== undefined) query.set('types', options.types);
    const body = await client.stream(`/teams/${team}/export${query.size ? `?${query}` : ''}`);
    const progress = startProgress({ label: 'export' });
    let lines = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
        progress.update(lines);
        done(null, chunk);
      },
    });
    try {
      await pipeline(body, counter, process.stdout);
    } catch (err) {
      // A reader that closed early (`| head`) took what it wanted.
      if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw new CommandFailed(`The export broke off: ${(err as Error).message}`);
    } finally {
      progress.stop();
    }
    return EXIT.done;
  });

const POLL_MS = 500;

/** `replay`: starts the replay (decisions.md §12) and follows it to its end; prints `{"replay": {...}}`. */
export const replay = (team: number, endpoint: number, range: { from: string; to?: string; types?: string }, out: Out) =>
  withClient(async (client) => {
    const body = { from: range.from, ...(range.to !== undefined && { to: range.to }), ...(range.types !== undefined && { types: range.types.split(',').map((t) => t.trim()) }) };
    const base = `/teams/${team}/webhook-endpoints/${endpoint}`;
    let r = (await client.expect('POST', `${base}/replay`, body)).replay;
    const progress = startProgress({ label: 'replay', total: r.queued });
    try {
      while (r.status === 'running') {
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        r = (await client.expect('GET', `${base}/replays/${r.id}`)).replay;
        progress.update(r.sent + r.failed, r.queued);
      }
    } finally {
      progress.stop();
    }
    out(JSON.stringify({ replay: r }));
    return r.status === 'done' ? EXIT.done : EXIT.failed;
  });

/**
 * `rebuild --drop-unused`: the MongoDB read-model collections no running build reads, dropped
 * (runtime/drop-unused.ts). A line per dropped collection on stdout, then the summary.
 */
export async function dropUnused(mongoUrl: string | undefined, out: Out): Promise<number> {
  if (!mongoUrl) throw new CommandFailed('--drop-unused works on the MongoDB read store: set TURNOUT_MONGO_URL.');
  try {
    const plan = await dropUnusedAt(mongoUrl, (name) => out(JSON.stringify({ dropped: name })));
    out(JSON.stringify({ dropUnused: { dropped: plan.drop.length, kept: plan.keep, checkpoints: plan.checkpoints.length } }));
    return EXIT.done;
  } catch (err) {
    if (err instanceof Error && /nothing dropped/.test(err.message)) throw new CommandFailed(err.message);
    throw err;
  }
}

function mustHoldLog(dataDir: string): void {
  if (!existsSync(path.join(dataDir, LOG_FILE))) throw new CommandFailed(`${path.resolve(dataDir)} holds no Turnout log (${LOG_FILE}); name the data dir with --data-dir or TURNOUT_DATA_DIR.`);
}

/** `rebuild`: every read model of an embedded data dir, again from its log, offline. */
export async function rebuild(dataDir: string, out: Out): Promise<number> {
  mustHoldLog(dataDir);
  const progress = startProgress({ label: 'rebuild' });
  try {
    const { events, ms } = await rebuildReadModels(dataDir, {
      progressEveryMs: 250,
      onProgress: (p) => progress.update(p.done, p.total),
      // Its end runs long SQLite statements on this thread: a line every 5 s from another (§13).
      whileSilent: (what) => heartbeat(`rebuild: still building ${what}`),
    });
    progress.stop();
    out(JSON.stringify({ rebuilt: { dataDir: path.resolve(dataDir), events, seconds: Math.round(ms) / 1000 } }));
    return EXIT.done;
  } catch (err) {
    progress.stop();
    if (err instanceof DataDirBusy) throw new CommandFailed(`${err.message} The rebuild runs offline: stop the server first.`);
    throw err;
  }
}

const MB = 1024 * 1024;

/**
 * `rebuild --prepare`: this release's read models built beside the live ones while the old
 * release's server serves (runtime/prepare.ts); prints `{"prepared": {...}}`.
 */
export async function prepare(dataDir: string, out: Out): Promise<number> {
  mustHoldLog(dataDir);
  // Background work beside a server that serves: the server's threads come first for the CPU.
  try {
    os.setPriority(10);
  } catch {
    // Not allowed here (some containers): it runs at the normal priority.
  }
  // Each made at its phase's first figures, so its rate counts from there.
  let copy = null as Progress | null;
  let progress = null as Progress | null;
  try {
    const done = await prepareReadModels(dataDir, {
      progressEveryMs: 250,
      report: (line) => void process.stderr.write(`prepare: ${line}\n`),
      whileSilent: (what) => heartbeat(`prepare: still building ${what}`),
      onCopy: (bytes, total) => (copy ??= startProgress({ label: 'prepare: copy of the live read models, MB' })).update(Math.round(bytes / MB), Math.round(total / MB)),
      onProgress: (p) => {
        copy?.stop();
        copy = null;
        (progress ??= startProgress({ label: 'prepare' })).update(p.done, p.total);
      },
    });
    copy?.stop(); // a copy with no catch-up after it: its 5 s timer ends with the command
    progress?.stop();
    const { file, built, resumed, events, position, ms } = done;
    out(JSON.stringify({ prepared: { dataDir: path.resolve(dataDir), file, readModels: built, resumed, events, position: String(position), seconds: Math.round(ms) / 1000 } }));
    return EXIT.done;
  } catch (err) {
    copy?.stop();
    progress?.stop();
    if (err instanceof PrepareBusy || err instanceof ErasureUnderway) throw new CommandFailed(err.message);
    throw err;
  }
}
