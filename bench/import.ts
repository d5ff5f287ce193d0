import { spawn } from 'node:child_process';
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

export async function run(): Promise<{ name: string; lines: string[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'turnout-bench-import-'));
  const product = await startProduct();
  try {
    const file = path.join(dir, 'constituents.csv');
    writeFileSync(file, csv(ROWS));
    const env = { TURNOUT_URL: product.origin, TURNOUT_ADMIN_TOKEN: 'bench-admin-token' };
    const t0 = performance.now();
    const r = await turnout(['import', file, '--team', String(product.team)], env);
    const seconds = (performance.now() - t0) / 1000;
    if (r.code !== 0) throw new Error(`turnout import exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
    const rate = ROWS / seconds;
    const met = seconds < TARGET_S * (ROWS / 100_000);
    return {
      name: 'import',
      lines: [
        `turnout import of ${ROWS.toLocaleString('en-US')} constituents (CSV, ${COLUMNS.length} columns), the built CLI against the embedded server in this process`,
        `  ${seconds.toFixed(1)} s, ${Math.round(rate).toLocaleString('en-US')} rows/s   target: 100,000 rows in < ${TARGET_S} s (${Math.round(100_000 / TARGET_S).toLocaleString('en-US')} rows/s)   ${met ? 'met' : 'MISSED'}`,
        `  ${r.stdout.trim().split('\n').join('; ')}`,
      ],
    };
  } finally {
    await product.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
