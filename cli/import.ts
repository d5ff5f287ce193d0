import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AdminClient, describeError } from './client.js';
import { CommandFailed, EXIT } from './errors.js';
import { startProgress } from './progress.js';
import { formatOf, readRows, type Row } from './rows.js';
import { fieldsOf, type Problem, type Resource, validator } from './validate.js';

export interface ImportOptions {
  team: number;
  resource: Resource;
  dryRun: boolean;
}

/**
 * Requests in flight at once. An import is bound by each write's round trip until the server's write
 * path is: 100,000 rows took 49-56 s at 32, 40-49 s at 96, 36 s at 160 and 36 s at 256 (docs/bench.md).
 */
export const CONCURRENCY = 160;
/** Answers worth another try with the same Idempotency-Key; anything else is the row's answer. */
const RETRIED = (status: number, code?: string) => status === 429 || status >= 500 || code === 'idempotency_key_in_progress';
const MAX_TRIES = 6;

const reportLine = (n: number, p: Problem) => `row ${n}: ${p.field}: ${p.code}: ${p.message}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `turnout import` (decisions.md §13): every row validated first, the invalid ones reported on
 * stdout and skipped, the valid ones sent in parallel, each with `Idempotency-Key:
 * import:<sha256 of the file>:<row>` so a re-run of the same file within 24 h writes nothing
 * twice. SIGINT stops sending, waits for the requests in flight and answers 130.
 */
export async function importFile(file: string, options: ImportOptions, out: (line: string) => void): Promise<number> {
  const format = formatOf(file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new CommandFailed(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
  }
  const rows = readRows(file, format, bytes, fieldsOf(options.resource));
  const check = validator(options.resource);
  const valid: Row[] = [];
  let invalid = 0;
  for (const row of rows) {
    const problem = row.problem ?? check(row.body);
    if (problem) {
      invalid++;
      out(reportLine(row.n, problem));
    } else valid.push(row);
  }
  out(`${valid.length} valid, ${invalid} invalid`);
  if (options.dryRun || valid.length === 0) return invalid ? EXIT.failed : EXIT.done;

  const client = AdminClient.fromEnv(process.env, CONCURRENCY);
  try {
    // One look first, so a wrong token or team is one clear error, not one per row.
    const probe = await client.call('GET', `/teams/${options.team}/activity?pageSize=1`);
    if (probe.status !== 200) throw new CommandFailed(describeError(probe));
    const sha = createHash('sha256').update(bytes).digest('hex');
    const result = await send(client, valid, options, sha);
    for (const [n, p] of [...result.failed].sort((a, b) => a[0] - b[0])) out(reportLine(n, p));
    const notSent = valid.length - result.written - result.failed.size;
    out(`${result.written} written, ${result.failed.size} failed${notSent ? `, ${notSent} not sent` : ''}`);
    if (result.interrupted) return EXIT.interrupted;
    return invalid || result.failed.size ? EXIT.failed : EXIT.done;
  } finally {
    await client.close();
  }
}

async function send(client: AdminClient, rows: Row[], options: ImportOptions, sha: string) {
  const path = `/teams/${options.team}/${options.resource}`;
  const failed = new Map<number, Problem>();
  let written = 0;
  let next = 0;
  let inFlight = 0;
  let stopping = false;
  const progress = startProgress({ label: 'import', total: rows.length });
  const onSigint = () => {
    if (stopping) process.exit(EXIT.interrupted);
    stopping = true;
    process.stderr.write(`\nimport: interrupted; waiting for ${inFlight} requests in flight, then stopping (run the same file again to finish)\n`);
  };
  process.on('SIGINT', onSigint);

  const sendOne = async (row: Row): Promise<Problem | null> => {
    const headers = { 'idempotency-key': `import:${sha}:${row.n}` };
    for (let attempt = 1; ; attempt++) {
      let status = 0;
      let problem: Problem;
      try {
        const r = await client.write('POST', path, row.body, headers);
        if (r.status >= 200 && r.status < 300) return null;
        status = r.status;
        const e = r.body?.error;
        problem = { field: e?.field ?? '-', code: e?.code ?? `http_${r.status}`, message: e?.message ?? `HTTP ${r.status} from the server.` };
        if (!RETRIED(status, e?.code)) return problem;
      } catch (err) {
        problem = { field: '-', code: 'not_sent', message: (err as Error).message };
      }
      if (attempt >= MAX_TRIES || stopping) return problem;
      await sleep(100 * 2 ** attempt);
    }
  };

  const worker = async () => {
    while (!stopping && next < rows.length) {
      const row = rows[next++];
      inFlight++;
      const problem = await sendOne(row);
      inFlight--;
      if (problem) failed.set(row.n, problem);
      else written++;
      progress.update(written + failed.size);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, rows.length) }, worker));
  } finally {
    progress.stop();
    process.off('SIGINT', onSigint);
  }
  return { written, failed, interrupted: stopping };
}
