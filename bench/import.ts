import { spawn } from 'node:child_process';
import Fastify from 'fastify';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { person } from './names.js';
import { startProduct } from './product.js';

/** Issue 17 item 10: 100,000 rows through `turnout import` in under 30 s against the embedded server. */
const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
const TARGET_S = 30;
const COLUMNS = ['FirstName', 'LastName', 'Email1', 'Phone1', 'MailingCity', 'MailingState', 'MailingZipCode', 'IsEmailOk'];

function csv(rows: number): string {
  const lines = [COLUMNS.join(',')];
  for (let i = 0; i < rows; i++) {
    const p = person(i);
    lines.push(COLUMNS.map((c) => (p[c] === undefined || p[c] === null ? '' : String(p[c]))).join(','));
  }
  return lines.join('\n') + '\n';
}

/** Runs the built CLI as an operator would, stdout and stderr kept (stderr is not a terminal: plain lines). */
function turnout(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const main = fileURLToPath(new URL('../cli/main.js', import.meta.url));
  const child = spawn(process.execPath, [main, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code: code ?? 1, stdout, stderr })));
}

/**
 * The baseline: the same CLI and file against a bare Fastify server that stores nothing. Its
 * routes answer the CLI's probe and each row's POST with 201 and the row back, about the size of
 * the product's answer. It is the floor of the HTTP round trips and the CLI's own work on this
 * machine, what any server would cost at the least.
 */
async function startBare(): Promise<{ origin: string; close(): Promise<void> }> {
  const app = Fastify({ logger: false });
  let n = 0;
  app.get('/admin/v1/teams/:team/activity', async () => ({ activity: [], total: 0 }));
  app.post('/admin/v1/teams/:team/constituents', async (request, reply) =>
    reply.code(201).send({ constituent: { PkConstituent: ++n, ...(request.body as object) } }),
  );
  const origin = await app.listen({ host: '127.0.0.1', port: 0 });
  return { origin, close: () => app.close() };
}

async function timedImport(file: string, origin: string, team: number) {
  const t0 = performance.now();
  const r = await turnout(['import', file, '--team', String(team)], { TURNOUT_URL: origin, TURNOUT_ADMIN_TOKEN: 'bench-admin-token' });
  const seconds = (performance.now() - t0) / 1000;
  if (r.code !== 0) throw new Error(`turnout import exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return { seconds, stdout: r.stdout };
}

export async function run(): Promise<{ name: string; lines: string[] }> {
  return { name: 'import', lines: await measureImport(ROWS) };
}

/** Imports `rows` rows through the bare baseline, then through the product; the figures' lines. */
export async function measureImport(rows: number): Promise<string[]> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-import-'));
  try {
    const file = path.join(dir, 'constituents.csv');
    writeFileSync(file, csv(rows));
    const bare = await startBare();
    const floor = await timedImport(file, bare.origin, 1).finally(() => bare.close());
    const product = await startProduct();
    const ours = await timedImport(file, product.origin, product.team).finally(() => product.close());
    const rate = rows / ours.seconds;
    const floorRate = rows / floor.seconds;
    const met = ours.seconds < TARGET_S * (rows / 100_000);
    return [
      `turnout import of ${rows.toLocaleString('en-US')} constituents (CSV, ${COLUMNS.length} columns), the built CLI against the embedded server in this process`,
      `  ${ours.seconds.toFixed(1)} s, ${Math.round(rate).toLocaleString('en-US')} rows/s   target: 100,000 rows in < ${TARGET_S} s (${Math.round(100_000 / TARGET_S).toLocaleString('en-US')} rows/s)   ${met ? 'met' : 'MISSED'}`,
      `  ${ours.stdout.trim().split('\n').join('; ')}`,
      `  baseline: the same CLI and file against a bare Fastify route that stores nothing: ${floor.seconds.toFixed(1)} s, ${Math.round(floorRate).toLocaleString('en-US')} rows/s (ours ${(rate / floorRate).toFixed(2)}x)`,
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
