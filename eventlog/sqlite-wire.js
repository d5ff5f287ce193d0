// @ts-check
/*
 * What travels between the SQLite event log and its writer thread. Plain JavaScript, typed by
 * JSDoc and checked by tsc: the writer thread (sqlite-writer-thread.js) imports it as it is, from
 * the sources under the test runner as from the build, and Node 20 cannot load TypeScript.
 *
 * A batch travels as one string and its outcomes as one BigInt64Array: a structured clone copies
 * those whole, where an array of objects is walked field by field (that cost the main thread
 * about 5%).
 */

/**
 * One append as the committer sees it: the events already serialised. `expected` is 'any',
 * 'no_stream', or the exact revision the stream must be at.
 * @typedef {{ stream: string; events: Array<{ type: string; data: string; metadata: string }>; expected: 'any' | 'no_stream' | bigint }} WireAppend
 */

/**
 * What became of one append: its last revision and position (its events took the positions up to
 * that one, consecutively), or the stream's actual revision when the expected one did not hold.
 * @typedef {{ revision: bigint; position: bigint } | { conflict: true; actual: bigint | null }} Outcome
 */

/**
 * How the writer thread's connection is set up; synchronous 2 is FULL.
 * @typedef {{ journalMode: string; synchronous: number }} WriterSettings
 */

/**
 * To the thread: a batch (encodeBatch), a question about its settings, a port to tell each
 * commit to (EventLog.tellCommits, port.ts: a CommitNotice), or the order to close.
 * @typedef {{ id: number; batch: string } | { id: number; settings: true } | { id: number; commitsTo: import('node:worker_threads').MessagePort } | { close: true }} WriterRequest
 */

/**
 * From the thread, in the order asked: a batch's outcomes (encodeOutcomes), the settings, that the
 * commits' port is in place, or why it failed.
 * @typedef {{ id: number; outcomes?: BigInt64Array; settings?: WriterSettings; attached?: true; failed?: string }} WriterAnswer
 */

/**
 * A batch as one string, its parts separated by NUL: per append the stream, the expected
 * revision and the number of events, then type, data and metadata per event. JSON text never
 * holds a raw NUL (JSON.stringify escapes it); stream and type names with one are refused by
 * SqliteEventLog.append.
 * @param {WireAppend[]} batch
 * @returns {string}
 */
export function encodeBatch(batch) {
  /** @type {string[]} */
  const parts = [];
  for (const a of batch) {
    parts.push(a.stream, String(a.expected), String(a.events.length));
    for (const e of a.events) parts.push(e.type, e.data, e.metadata);
  }
  return parts.join('\u0000');
}

/**
 * encodeBatch undone.
 * @param {string} text
 * @returns {WireAppend[]}
 */
export function decodeBatch(text) {
  /** @type {WireAppend[]} */
  const batch = [];
  if (text === '') return batch;
  const parts = text.split('\u0000');
  let i = 0;
  while (i < parts.length) {
    const stream = parts[i++];
    const e = parts[i++];
    const expected = e === 'any' || e === 'no_stream' ? e : BigInt(e);
    const n = Number(parts[i++]);
    /** @type {WireAppend['events']} */
    const events = [];
    for (let k = 0; k < n; k++, i += 3) events.push({ type: parts[i], data: parts[i + 1], metadata: parts[i + 2] });
    batch.push({ stream, expected, events });
  }
  return batch;
}

/**
 * Two slots per append: revision and position; a conflict is position -1 with the stream's
 * actual revision (-1 for none).
 * @param {Outcome[]} outcomes
 * @returns {BigInt64Array}
 */
export function encodeOutcomes(outcomes) {
  const out = new BigInt64Array(outcomes.length * 2);
  outcomes.forEach((o, i) => {
    if ('conflict' in o) {
      out[2 * i] = o.actual ?? -1n;
      out[2 * i + 1] = -1n;
    } else {
      out[2 * i] = o.revision;
      out[2 * i + 1] = o.position;
    }
  });
  return out;
}

/**
 * encodeOutcomes undone.
 * @param {BigInt64Array} slots
 * @returns {Outcome[]}
 */
export function decodeOutcomes(slots) {
  /** @type {Outcome[]} */
  const outcomes = [];
  for (let i = 0; i < slots.length; i += 2) {
    const revision = slots[i];
    const position = slots[i + 1];
    outcomes.push(position === -1n ? { conflict: true, actual: revision === -1n ? null : revision } : { revision, position });
  }
  return outcomes;
}

/**
 * What the writer thread tells the port given by EventLog.tellCommits after each commit, before
 * its appends are answered: the commit's last position, and the appends it committed as they
 * reached the thread (each batch's text, encodeBatch) with their outcomes (encodeOutcomes, one pair
 * of slots per append, batches in order). The projector thread takes the events from it instead of
 * reading back what was just written.
 * @typedef {{ last: bigint; texts: string[]; outcomes: BigInt64Array }} CommitNotice
 */

/**
 * The events a commit notice carries, in log order, as the log's rows read back would give them
 * (`toRow` makes each one of its row, as a read of the file does); conflicting appends wrote none.
 * @template T
 * @param {CommitNotice} notice
 * @param {(row: { position: bigint; stream: string; revision: bigint; type: string; data: string; metadata: string }) => T} toRow
 * @returns {T[]}
 */
export function eventsOfNotice(notice, toRow) {
  /** @type {T[]} */
  const out = [];
  let slot = 0;
  for (const text of notice.texts) {
    for (const a of decodeBatch(text)) {
      const revision = notice.outcomes[slot];
      const position = notice.outcomes[slot + 1];
      slot += 2;
      if (position === -1n) continue;
      // The append's events took consecutive positions and revisions, ending at these.
      const n = BigInt(a.events.length);
      a.events.forEach((e, k) => {
        const back = n - 1n - BigInt(k);
        out.push(toRow({ position: position - back, stream: a.stream, revision: revision - back, type: e.type, data: e.data, metadata: e.metadata }));
      });
    }
  }
  return out;
}
