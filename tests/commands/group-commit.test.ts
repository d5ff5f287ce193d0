import { describe, expect, it, vi } from 'vitest';
import { GroupCommit } from '../../eventlog/sqlite-group-commit.js';
import { WriterThread, type Outcome, type WireAppend } from '../../eventlog/sqlite-writer.js';
import type { RecentEvents } from '../../eventlog/sqlite-recent.js';
import type { Followers } from '../../eventlog/sqlite-follow.js';

/**
 * A writer thread scripted by the test: each commit is answered when the test says, or throws
 * at once as `WriterThread.commit` does when a batch cannot be encoded (a string past V8's limit).
 */
function scriptedWriter(script: Array<'wait' | 'throw'>) {
  const answers: Array<(outcomes: Outcome[]) => void> = [];
  let position = 0n;
  const writer = Object.create(WriterThread.prototype) as WriterThread;
  writer.commit = (batch: WireAppend[]) => {
    if (script.shift() === 'throw') throw new RangeError('Invalid string length');
    return new Promise<Outcome[]>((resolve) => answers.push(() => resolve(batch.map(() => ({ revision: 0n, position: ++position })))));
  };
  return { writer, answers };
}

const recent = { remember: () => {} } as unknown as RecentEvents;
const followers = { wake: () => {} } as unknown as Followers;
const append = (n: number): WireAppend => ({ stream: `constituent-${n}`, events: [{ type: 'ConstituentCreated', data: '{}', metadata: '{}' }], expected: 'no_stream' });
const turn = () => new Promise((resolve) => setImmediate(resolve));
const settled = (p: Promise<unknown>) => p.then(() => 'resolved', () => 'rejected');

describe('group commit on the writer thread, when a batch cannot be sent', () => {
  it('fails that batch alone, at once, instead of leaving its appends waiting for ever', async () => {
    const { writer } = scriptedWriter(['throw']);
    const commits = new GroupCommit(writer, recent, followers);
    await expect(commits.add(append(1))).rejects.toThrow('Invalid string length');
  });

  it('a batch held back behind two in flight fails alone when it is sent; the answered ones stay committed', async () => {
    const { writer, answers } = scriptedWriter(['wait', 'wait', 'throw']);
    const commits = new GroupCommit(writer, recent, followers);
    const first = settled(commits.add(append(1)));
    await turn();
    const second = settled(commits.add(append(2)));
    await turn();
    // Two batches out: the third waits for the first's answer, and is sent from it.
    const third = settled(commits.add(append(3)));
    await turn();
    expect(answers).toHaveLength(2);
    answers[0]([]);
    answers[1]([]);
    expect(await Promise.all([first, second, third])).toEqual(['resolved', 'resolved', 'rejected']);
  });
});

/** A writer thread whose commits the test answers or fails, one by one, keeping what each held. */
function answeredWriter() {
  const commits: Array<{ streams: string[]; answer: () => void; fail: () => void; conflict: () => void }> = [];
  let position = 0n;
  const writer = Object.create(WriterThread.prototype) as WriterThread;
  writer.commit = (batch: WireAppend[]) =>
    new Promise<Outcome[]>((resolve, reject) => {
      commits.push({
        streams: batch.map((a) => a.stream),
        answer: () => resolve(batch.map(() => ({ revision: 0n, position: ++position }))),
        fail: () => reject(new Error('disk full')),
        // Every append of the commit lost its race (its expected revision did not hold).
        conflict: () => resolve(batch.map(() => ({ conflict: true, actual: 0n }) as Outcome)),
      });
    });
  return { writer, commits };
}

describe('an append that must follow another (decisions.md §14, a batch\'s items)', () => {
  it('goes in the same commit as the one it follows while that one is still queued, without waiting', async () => {
    const { writer, commits } = answeredWriter();
    const log = new GroupCommit(writer, recent, followers);
    const first = log.add(append(1), undefined, { followed: true });
    const second = settled(log.add(append(2), undefined, { after: first, followed: true }));
    await turn();
    expect(commits.map((c) => c.streams)).toEqual([['constituent-1', 'constituent-2']]);
    commits[0].answer();
    expect(await second).toBe('resolved');
  });

  it('is not sent while the one it follows is in an earlier commit, then goes once that one has committed, with what follows it', async () => {
    const { writer, commits } = answeredWriter();
    const log = new GroupCommit(writer, recent, followers);
    const first = log.add(append(1), undefined, { followed: true });
    await turn();
    const second = log.add(append(2), undefined, { after: first, followed: true });
    const third = settled(log.add(append(3), undefined, { after: second }));
    await turn();
    expect(commits.map((c) => c.streams)).toEqual([['constituent-1']]);
    commits[0].answer();
    await vi.waitFor(() => expect(commits.map((c) => c.streams)).toEqual([['constituent-1'], ['constituent-2', 'constituent-3']]));
    commits[1].answer();
    expect(await third).toBe('resolved');
  });

  it('is never sent, nor what follows it, when the commit of the one it follows fails, though a later commit succeeds', async () => {
    const { writer, commits } = answeredWriter();
    const log = new GroupCommit(writer, recent, followers);
    const first = log.add(append(1), undefined, { followed: true });
    await turn();
    const second = log.add(append(2), undefined, { after: first, followed: true });
    const third = log.add(append(3), undefined, { after: second });
    const other = log.add(append(4));
    await turn();
    expect(commits.map((c) => c.streams)).toEqual([['constituent-1'], ['constituent-4']]);
    commits[0].fail();
    commits[1].answer();
    expect(await Promise.all([first, second, third, other].map(settled))).toEqual(['rejected', 'rejected', 'rejected', 'resolved']);
    await turn();
    expect(commits.map((c) => c.streams)).toEqual([['constituent-1'], ['constituent-4']]);
  });

  // After the review of 8937145 (rev26j): a follower of a dropped append waited for ever, and
  // close() left held appends to a closed writer.
  it('fails at once an append following one already dropped, rather than waiting for ever', async () => {
    let calls = 0;
    let position = 0n;
    // In place: the first commit fails (disk full), later ones succeed.
    const committer = (appends: WireAppend[]): Outcome[] => {
      if (calls++ === 0) throw new Error('disk full');
      return appends.map(() => ({ revision: 0n, position: ++position }));
    };
    const log = new GroupCommit(committer as never, recent, followers);
    const first = log.add(append(1), undefined, { followed: true });
    const firstOutcome = settled(first);
    await turn();
    expect(await firstOutcome).toBe('rejected');
    const second = log.add(append(2), undefined, { after: first, followed: true });
    expect(await settled(second)).toBe('rejected');
    const third = settled(log.add(append(3), undefined, { after: second }));
    expect(await Promise.race([third, new Promise((r) => setTimeout(() => r('never settled'), 2000))])).toBe('rejected');
  });

  it('commits, before close() ends, an append held behind one in an earlier commit', async () => {
    const committed: string[] = [];
    let position = 0n;
    const committer = (appends: WireAppend[]): Outcome[] => {
      committed.push(...appends.map((a) => a.stream));
      return appends.map(() => ({ revision: 0n, position: ++position }));
    };
    const log = new GroupCommit(committer as never, recent, followers);
    const first = log.add(append(1), undefined, { followed: true });
    await turn();
    await first;
    const second = settled(log.add(append(2), undefined, { after: first }));
    await log.close();
    expect(committed).toEqual(['constituent-1', 'constituent-2']);
    expect(await second).toBe('resolved');
  });

  it('holds an append whose predecessor lost a race until that writer ends: sent if it ended well, failed if not', async () => {
    const { writer, commits } = answeredWriter();
    const log = new GroupCommit(writer, recent, followers);
    for (const ends of ['well', 'badly'] as const) {
      let end!: { ok: () => void; fail: () => void };
      const writerEnd = new Promise<void>((ok, fail) => (end = { ok, fail: () => fail(new Error('disk full')) }));
      writerEnd.catch(() => undefined);
      const raced = log.add({ ...append(10), expected: 5n }, undefined, { followed: true });
      await turn();
      const next = settled(log.add(append(11), undefined, { after: raced, settled: writerEnd }));
      // The commit answers a conflict for the first.
      commits.at(-1)!.conflict();
      await settled(raced);
      await turn();
      const before = commits.length;
      if (ends === 'well') end.ok();
      else end.fail();
      await turn();
      if (ends === 'well') {
        await vi.waitFor(() => expect(commits.length).toBe(before + 1));
        commits.at(-1)!.answer();
        expect(await next).toBe('resolved');
      } else {
        expect(await next).toBe('rejected');
        expect(commits.length).toBe(before);
      }
    }
  });
});
