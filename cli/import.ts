import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AdminClient, describeError, JsonText, parseJson } from './client.js';
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
 * Rows a batch (decisions.md §14 allows 1..1000), and batches in flight at once: chosen on the
 * import bench (docs/bench.md), where bigger batches stopped paying once the server's write path,
 * not the round trips, was the bound.
 */
export const BATCH_ROWS = 500;
export const CONCURRENCY = 4;
/** The bench's way to run other sizes (bench/import.ts BENCH_IMPORT_BATCHES); not an option for users. */
const batchRows = () => Math.min(1000, Math.max(1, Number(process.env.TURNOUT_IMPORT_BATCH_ROWS) || BATCH_ROWS));
/** Batches in flight, the same way for the bench (TURNOUT_IMPORT_IN_FLIGHT). */
const inFlightMost = () => Math.min(16, Math.max(1, Number(process.env.TURNOUT_IMPORT_IN_FLIGHT) || CONCURRENCY));
/** Under the batch routes' 16 MiB body limit, with room for the envelope. */
const BATCH_BYTES = 15 * 1024 * 1024;
/** Answers worth another try with the same Idempotency-Key; anything else is the batch's answer. */
const RETRIED = (status: number, code?: string) => status === 429 || status >= 500 || code === 'idempotency_key_in_progress';
const MAX_TRIES = 6;

const reportLine = (n: number, p: Problem) => `row ${n}: ${p.field}: ${p.code}: ${p.message}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `turnout import` (decisions.md §13): every row validated first, the invalid ones reported on
 * stdout and skipped, the valid ones sent in batches through the admin batch route, a few at a
 * time, each with `Idempotency-Key: import:<sha256 of the file>:<first row>-<last row>`, so a
 * re-run of the same file within 24 h cuts the same batches and writes nothing twice. An item the
 * server refuses is reported with its row's number. SIGINT stops sending, waits for the batches
 * in flight and answers 130.
 */
export async function importFile(file: string, options: ImportOptions, out: (line: string) => void): Promise<number> {
  // User Timing marks of the import's phases: the import bench lays them beside the server's
  // threads (bench/import-timeline.ts); two a batch, so they cost nothing to keep.
  performance.mark('import:start');
  const format = formatOf(file);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (err) {
    throw new CommandFailed(`${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`);
  }
  performance.mark('import:read');
  const check = validator(options.resource);
  const valid: Row[] = [];
  let invalid = 0;
  for (const row of readRows(file, format, bytes, fieldsOf(options.resource))) {
    // Each body made JSON once: checked, measured and sent as that text; only the text is kept.
    const json = row.problem ? undefined : JSON.stringify(row.body);
    const problem = row.problem ?? check(row.body, json);
    if (problem) {
      invalid++;
      out(reportLine(row.n, problem));
    } else valid.push({ n: row.n, json });
  }
  out(`${valid.length} valid, ${invalid} invalid`);
  performance.mark('import:validated');
  if (options.dryRun || valid.length === 0) return invalid ? EXIT.failed : EXIT.done;

  const client = AdminClient.fromEnv(process.env, inFlightMost());
  try {
    // One look first, so a wrong token or team is one clear error, not one per row.
    // It answers at once from a server that works: one that takes longer says so (a stalled
    // server would otherwise hold the import silent for undici's five minutes).
    const probe = await client.call('GET', `/teams/${options.team}/activity?pageSize=1`, undefined, {}, PROBE_TIMEOUT_MS);
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

/** How long import's first look at the server may take. */
const PROBE_TIMEOUT_MS = 30_000;

/** The valid rows cut into batches: by count, and by size under the body limit; the same file always cuts the same. */
export function batchesOf(rows: Row[], maxRows = batchRows(), maxBytes = BATCH_BYTES): Row[][] {
  const out: Row[][] = [];
  let current: Row[] = [];
  let bytes = 0;
  for (const row of rows) {
    const size = Buffer.byteLength(row.json ?? JSON.stringify(row.body)) + 1;
    if (current.length && (current.length >= maxRows || bytes + size > maxBytes)) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(row);
    bytes += size;
  }
  if (current.length) out.push(current);
  return out;
}

interface ItemResult {
  status: number;
  error?: { code: string; message: string; field?: string };
}

/**
 * Whether a batch's answer says every item was written (each result a 2xx), found without
 * parsing its half a megabyte: exactly one result object per item and no `"error":` key, which
 * every refused item's result has (decisions.md §14). Inside a string every quote is escaped, so
 * neither text can come from a record's value; a record's nested object beginning with a
 * `status` field makes the count wrong, and the answer is parsed, as is any other answer.
 * JSON.parse of the answers was the CLI's largest cost while it sends.
 */
export function allWritten(text: string, items: number): boolean {
  if (!text.startsWith('{"results":[') || text.includes('"error":')) return false;
  let results = 0;
  for (let at = text.indexOf('{"status":'); at >= 0; at = text.indexOf('{"status":', at + 10)) if (++results > items) return false;
  return results === items;
}

/** A refusal as the report prints it, whether of one item or of the whole batch. */
const problemOf = (status: number, e?: ItemResult['error']): Problem => ({ field: e?.field ?? '-', code: e?.code ?? `http_${status}`, message: e?.message ?? `HTTP ${status} from the server.` });

async function send(client: AdminClient, rows: Row[], options: ImportOptions, sha: string) {
  const path = `/teams/${options.team}/${options.resource}/batch`;
  const batches = batchesOf(rows);
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

  /** Each row's answer: null when written, else its problem. */
  const sendBatch = async (batch: Row[]): Promise<Array<Problem | null>> => {
    const headers = { 'idempotency-key': `import:${sha}:${batch[0].n}-${batch[batch.length - 1].n}` };
    for (let attempt = 1; ; attempt++) {
      let problem: Problem;
      try {
        const answer = await client.callText('POST', path, new JsonText(`{"items":[${batch.map((row) => row.json ?? JSON.stringify(row.body)).join(',')}]}`), headers);
        if (answer.status === 200 && allWritten(answer.text, batch.length)) return batch.map(() => null);
        const r = { status: answer.status, body: parseJson(answer.text) as { results?: unknown; error?: ItemResult['error'] } | null };
        if (r.status === 200 && Array.isArray(r.body?.results) && r.body.results.length === batch.length)
          return (r.body.results as ItemResult[]).map((item) =>
            item.status >= 200 && item.status < 300 ? null : problemOf(item.status, item.error),
          );
        const e = r.body?.error;
        problem = problemOf(r.status, e);
        if (!RETRIED(r.status, e?.code)) return batch.map(() => problem);
      } catch (err) {
        problem = { field: '-', code: 'not_sent', message: (err as Error).message };
      }
      if (attempt >= MAX_TRIES || stopping) return batch.map(() => problem);
      await sleep(100 * 2 ** attempt);
    }
  };

  const worker = async () => {
    while (!stopping && next < batches.length) {
      const index = next++;
      const batch = batches[index];
      inFlight++;
      performance.mark(`import:send:${index}`);
      const answers = await sendBatch(batch);
      performance.mark(`import:answer:${index}`);
      inFlight--;
      answers.forEach((problem, i) => {
        if (problem) failed.set(batch[i].n, problem);
        else written++;
      });
      progress.update(written + failed.size);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(inFlightMost(), batches.length) }, worker));
  } finally {
    progress.stop();
    process.off('SIGINT', onSigint);
  }
  return { written, failed, interrupted: stopping };
}
