import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteKeyStore } from '../../eventlog/keys.js';
import { ANY, type EventLog, type NewEvent } from '../../eventlog/port.js';
import { SealingEventLog } from '../../eventlog/sealed-log.js';
import { Sealer } from '../../eventlog/sealing.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { until } from './eventlog.contract.js';
import { tempDirs } from '../support/temp-dirs.js';

/**
 * The seals of one turn's appends are made on a thread of their own, handed over in one message
 * and answered in one (decisions.md §17 unchanged: AES-256-GCM, a key per constituent, a fresh
 * nonce per seal, an erasure that begins meanwhile wins); a thread that stops fails its turns'
 * appends, and the next turn starts another.
 */
const tempDir = tempDirs('turnout-sealed-thread-');
afterEach(() => vi.restoreAllMocks());
const main = new Sealer(Sealer.newKey());
const meta = { team: 1, source: 'Public API' as const, keyName: 'k', correlationId: 'c', at: '2026-11-27T08:00:00.000Z' };
const created = (id: number, fields: Record<string, unknown>): NewEvent => ({ type: 'ConstituentCreated', data: { id, fields }, metadata: meta });
const person = (id: number) => created(id, { FirstName: `Marker${id}`, Email1: `marker${id}@example.org`, IsEmailOk: true });
const DIES = new URL('../support/seal-thread-dies.js', import.meta.url);

interface ThreadView {
  ready: boolean;
  busy: boolean;
  worker: Worker;
}
const turnsOf = (log: SealingEventLog) => (log as unknown as { turns: { thread: ThreadView | null; threadless: boolean } }).turns;

function open(dir = tempDir(), sealThread?: URL | null) {
  const inner = new SqliteEventLog(path.join(dir, 'log.sqlite'), { pollMs: 20 });
  return { dir, inner, log: new SealingEventLog(inner, new SqliteKeyStore(path.join(dir, 'keys.sqlite'), main), { sealThread }) };
}

/** A log whose sealing thread has started: the first append starts it (sealed on the main thread meanwhile). */
async function started(sealThread?: URL) {
  const opened = open(tempDir(), sealThread);
  await opened.log.append('constituent-1', [person(1)], 'no_stream');
  await until('the sealing thread to start', () => turnsOf(opened.log).thread?.ready === true);
  return { ...opened, thread: turnsOf(opened.log).thread! };
}

/** The messages posted to the thread from now on. */
function posted(thread: ThreadView, then?: (m: Record<string, unknown>) => void) {
  const sent: Array<Record<string, unknown>> = [];
  const post = thread.worker.postMessage.bind(thread.worker);
  vi.spyOn(thread.worker, 'postMessage').mockImplementation((m: Record<string, unknown>) => {
    sent.push(m);
    post(m);
    then?.(m);
  });
  return sent;
}

const appendAll = (log: EventLog, ids: number[]) => Promise.allSettled(ids.map((id) => log.append(`constituent-${id}`, [person(id)], 'no_stream')));

describe('the sealing thread', () => {
  it('takes the seals of a turn\u2019s appends in one message and answers their texts in one, which open as the main thread\u2019s do', async () => {
    const { dir, inner, log, thread } = await started();
    const sent = posted(thread);
    let answers = 0;
    thread.worker.on('message', (m: { texts?: unknown }) => void (m.texts !== undefined && answers++));
    const sealedHere = vi.spyOn(Sealer.prototype, 'sealBytes');
    const ids = Array.from({ length: 20 }, (_, i) => i + 2);
    expect((await appendAll(log, ids)).map((r) => r.status)).toEqual(Array(20).fill('fulfilled'));
    expect(sent).toHaveLength(1);
    expect((sent[0].seals as string).split('\0')).toHaveLength(3 * 20);
    expect(answers).toBe(1);
    expect(sealedHere).not.toHaveBeenCalled();
    vi.restoreAllMocks();
    // At rest sealed; opened by another process's sealing layer, on its main thread.
    const raw = await inner.readStream('constituent-7');
    expect(JSON.stringify(raw.map((e) => e.data))).not.toContain('Marker7');
    await log.close();
    const other = open(dir, null).log;
    for (const id of ids) expect((await other.readStream(`constituent-${id}`))[0].data).toEqual(person(id).data);
    await other.close();
  });

  it('sends each seal its key with its turn, the thread keeping none between turns: the stream\u2019s key again with its next seal, and nothing at an erasure', async () => {
    const { log, thread } = await started();
    // Each turn's message as posted (the main thread zeroes its copy of the keys right after).
    const turns: Array<{ streams: string[]; keys: Uint8Array }> = [];
    const sent = posted(thread, (m) => {
      const triples = (m.seals as string).split('\0');
      turns.push({ streams: triples.filter((_, i) => i % 3 === 0), keys: new Uint8Array(m.keys as Uint8Array) });
    });
    const update = (id: number): NewEvent => ({ type: 'ConstituentUpdated', data: { id, changes: { LastName: `Again${id}` } }, metadata: meta });
    expect((await appendAll(log, [2, 3, 4])).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    await Promise.all([2, 3, 4].map((id) => log.append(`constituent-${id}`, [update(id)], 0n)));
    expect(turns.map((t) => t.streams)).toEqual([['constituent-2', 'constituent-3', 'constituent-4'], ['constituent-2', 'constituent-3', 'constituent-4']]);
    for (const t of turns) expect(t.keys).toHaveLength(32 * 3);
    // The same key a stream, sent again with each seal, and a key apart for each stream.
    expect(turns[1].keys).toEqual(turns[0].keys);
    const keyOf = (k: number) => Buffer.from(turns[0].keys.subarray(32 * k, 32 * k + 32)).toString('hex');
    expect(new Set([0, 1, 2].map(keyOf)).size).toBe(3);
    // An erasure has nothing to tell the thread.
    await log.rewriteStream('constituent-3');
    expect(sent).toHaveLength(2);
    expect((await log.readStream('constituent-2')).map((e) => e.data)).toEqual([person(2).data, { id: 2, changes: { LastName: 'Again2' } }]);
    await log.close();
  });

  it('gives every seal a nonce of its own, on the main thread before the thread starts, on the thread, and on the thread started after one stopped', async () => {
    const { inner, log, thread } = await started();
    let id = 2;
    const batch = () => appendAll(log, Array.from({ length: 100 }, () => id++));
    for (let i = 0; i < 10; i++) await batch();
    await thread.worker.terminate();
    await until('the thread to be gone', () => turnsOf(log).thread !== thread);
    // Sealed here while the next thread starts, then there.
    await batch();
    await until('another sealing thread to start', () => turnsOf(log).thread?.ready === true);
    for (let i = 0; i < 10; i++) await batch();
    const nonces: string[] = [];
    for (let n = 1; n < id; n++) {
      const [e] = await inner.readStream(`constituent-${n}`);
      const text = (e.data as { sealed: { fields: string } }).sealed.fields;
      nonces.push(Buffer.from(text.slice(Sealer.TEXT_PREFIX.length), 'base64url').subarray(1, 13).toString('hex'));
    }
    expect(nonces).toHaveLength(2_101);
    expect(new Set(nonces).size).toBe(nonces.length);
    await log.close();
  });

  it('refuses an append whose subject is erased while its turn is on the thread, and writes nothing of it', async () => {
    const { inner, log, thread } = await started();
    await log.append('constituent-2', [person(2)], 'no_stream');
    let erased: Promise<number> | undefined;
    const sent = posted(thread, (m) => {
      // The erasure begins once the turn is on the thread, before its texts come back.
      if (typeof m.seals === 'string' && !erased) erased = log.rewriteStream('constituent-3');
    });
    const [a, ...others] = await appendAll(log, [3, 4, 5, 6]);
    expect(a).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/constituent-3 is erased/) }) });
    expect(others.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    await erased;
    expect(await inner.readStream('constituent-3')).toEqual([]);
    expect(sent).toHaveLength(1);
    await log.close();
  });

  it('sends no key of a subject erased while its append waits for its turn', async () => {
    const { inner, log, thread } = await started();
    const sent = posted(thread);
    const appended = appendAll(log, [5, 6, 7, 8]);
    const erased = log.rewriteStream('constituent-5');
    const [a, ...others] = await appended;
    await erased;
    expect(a.status).toBe('rejected');
    expect(others.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
    expect(await inner.readStream('constituent-5')).toEqual([]);
    const streams = sent.flatMap((m) => (m.seals as string).split('\0').filter((_, i) => i % 3 === 0));
    expect(streams).not.toContain('constituent-5');
    expect(streams).toContain('constituent-6');
    for (const m of sent) expect((m.keys as Uint8Array).length).toBe((32 * (m.seals as string).split('\0').length) / 3);
    await log.close();
  });

  it('fails the appends of a turn whose thread stops under it, writes nothing of them, and seals the next turns on another thread', async () => {
    const { inner, log, thread } = await started(DIES);
    await log.append('constituent-12', [person(12)], 'no_stream');
    const results = await appendAll(log, [13, 14, 20, 21]);
    for (const r of results) expect(r).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/the sealing thread stopped .* nothing of it was written/) }) });
    expect(await inner.readStream('constituent-13')).toEqual([]);
    expect(await inner.readStream('constituent-14')).toEqual([]);
    // The next turn starts another thread (sealed here until it is ready), and then seals there.
    await log.append('constituent-15', [person(15)], 'no_stream');
    await until('another sealing thread to start', () => turnsOf(log).thread?.ready === true);
    const next = turnsOf(log).thread!;
    expect(next).not.toBe(thread);
    const sent = posted(next);
    await appendAll(log, [16, 22, 23]);
    expect(sent).toHaveLength(1);
    for (const id of [12, 15, 16, 22, 23]) expect((await log.readStream(`constituent-${id}`))[0].data).toEqual(person(id).data);
    await log.close();
  });

  it('seals a turn of one or two seals on the main thread while none is on the thread, and one behind a turn there after it, in order', async () => {
    const { log, thread } = await started();
    const sealedHere = vi.spyOn(Sealer.prototype, 'sealBytes');
    const answered: string[] = [];
    const append = (id: number) => log.append(`constituent-${id}`, [person(id)], 'no_stream').then(() => void answered.push(`created ${id}`));
    const flush = () => (turnsOf(log) as unknown as { flush(): void }).flush();
    let behind: Array<Promise<void>> = [];
    const sent = posted(thread, (m) => {
      if (typeof m.seals !== 'string' || behind.length) return;
      // While the turn is on the thread: an append with nothing to seal, then a lone one, each
      // turn's seals taken at once (the next check phase may come after the answer).
      behind = [log.append('constituent-20', [{ type: 'ConstituentLocked', data: { id: 20 }, metadata: meta }], ANY).then(() => void answered.push('locked 20'))];
      flush();
      behind.push(append(30));
      flush();
    });
    await Promise.all([append(20), append(21)]);
    expect(sealedHere).toHaveBeenCalledTimes(2);
    expect(sent).toHaveLength(0);
    await Promise.all(Array.from({ length: 8 }, (_, i) => append(22 + i)));
    await Promise.all(behind);
    expect(sent.filter((m) => typeof m.seals === 'string').map((m) => (m.seals as string).split('\0').length)).toEqual([3 * 8, 1, 3]);
    expect(answered.slice(-2)).toEqual(['locked 20', 'created 30']);
    await log.close();
  });

  it('seals on the main thread, starting no thread again, when the thread cannot start', async () => {
    const { log } = open(tempDir(), new URL('./no-such-program.js', DIES));
    await log.append('constituent-1', [person(1)], 'no_stream');
    await until('the thread to have failed', () => turnsOf(log).threadless);
    const sealedHere = vi.spyOn(Sealer.prototype, 'sealBytes');
    await appendAll(log, [2, 3, 4]);
    expect(sealedHere).toHaveBeenCalledTimes(3);
    expect(turnsOf(log).thread).toBeNull();
    expect((await log.readStream('constituent-3'))[0].data).toEqual(person(3).data);
    await log.close();
  });

  it('lets the turns on the thread finish and reach the log when it is closed', async () => {
    const { dir, log, thread } = await started();
    let closed: Promise<void> | undefined;
    posted(thread, (m) => {
      if (typeof m.seals === 'string' && !closed) closed = log.close();
    });
    const ids = Array.from({ length: 10 }, (_, i) => i + 2);
    const results = await appendAll(log, ids);
    await closed;
    expect(results.map((r) => r.status)).toEqual(Array(10).fill('fulfilled'));
    const reopened = open(dir, null).log;
    for (const id of ids) expect((await reopened.readStream(`constituent-${id}`))[0].data).toEqual(person(id).data);
    await reopened.close();
  });
});
