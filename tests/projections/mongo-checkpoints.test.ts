import { describe, expect, it } from 'vitest';
import { MongoReadStore } from '../../projections/store/mongo.js';
import { CheckpointMoved } from '../../projections/store/port.js';
import { scriptedMongo } from '../support/scripted-mongo.js';

const at = (n: bigint) => ({ commit: n, prepare: n });

describe('MongoDB checkpoints written by several processes over time (scripted collection)', () => {
  it('moves one with a compare-and-set: an upsert whose filter names the position the writer knew', async () => {
    const mongo = scriptedMongo();
    const store = new MongoReadStore(mongo.db);
    await store.moveCheckpoints([{ name: 'projector:tally@v1', from: at(0n), to: { commit: 12n, prepare: 11n } }]);
    await store.moveCheckpoints([{ name: 'projector:tally@v1', from: { commit: 12n, prepare: 11n }, to: at(20n) }]);
    expect(mongo.documents('checkpoints')).toEqual([{ _id: 'projector:tally@v1', position: '20/20' }]);
    const sent = mongo.calls.filter((c) => c.collection === 'checkpoints' && c.op === 'updateOne').map((c) => c.args);
    expect(sent).toEqual([
      [{ _id: 'projector:tally@v1', position: { $in: ['0/0', '0'] } }, { $set: { position: '12/11' } }, { upsert: true }],
      [{ _id: 'projector:tally@v1', position: '12/11' }, { $set: { position: '20/20' } }, { upsert: false }],
    ]);
  });

  it('refuses a move from a position another writer has left (the server\u2019s duplicate key), leaving its checkpoint', async () => {
    const mongo = scriptedMongo();
    const store = new MongoReadStore(mongo.db);
    await store.setCheckpoint('projector:tally@v1', at(30n)); // the successor's
    const late = store.moveCheckpoints([{ name: 'projector:tally@v1', from: at(10n), to: at(25n) }]);
    await expect(late).rejects.toBeInstanceOf(CheckpointMoved);
    await expect(late).rejects.toThrow('checkpoint projector:tally@v1 was moved by another writer');
    expect(await store.getCheckpoint('projector:tally@v1')).toEqual(at(30n));
  });

  it('does not make again a checkpoint dropped meanwhile (`--drop-unused`) from a position, only from the start', async () => {
    const mongo = scriptedMongo();
    const store = new MongoReadStore(mongo.db);
    await expect(store.moveCheckpoints([{ name: 'projector:tally@v1', from: at(10n), to: at(25n) }])).rejects.toBeInstanceOf(CheckpointMoved);
    expect(mongo.documents('checkpoints')).toEqual([]);
  });

  it('takes a position stored as its commit alone as the same position', async () => {
    const mongo = scriptedMongo();
    const store = new MongoReadStore(mongo.db);
    await mongo.db.collection('checkpoints').updateOne({ _id: 'projector:tally@v1' as never }, { $set: { position: '7' } }, { upsert: true });
    expect(await store.getCheckpoint('projector:tally@v1')).toEqual(at(7n));
    await store.moveCheckpoints([{ name: 'projector:tally@v1', from: at(7n), to: at(9n) }]);
    expect(await store.getCheckpoint('projector:tally@v1')).toEqual(at(9n));
  });
});
