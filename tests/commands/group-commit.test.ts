import { describe, expect, it } from 'vitest';
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
