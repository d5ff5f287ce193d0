import { MongoClient } from 'mongodb';
import { LIVE_FOR_MS, READ_MODEL_USERS } from '../projections/engine/builds.js';
import { projectors } from '../projections/index.js';
import { dbNameOf, MONGO_CHECKPOINTS } from '../projections/store/mongo.js';
import { type DropPlan, dropUnusedReadModels } from '../projections/store/mongo-versions.js';

/**
 * `turnout rebuild --drop-unused` on the MongoDB read store at `url`: drops the read-model
 * collections of versions no running process reads (registered within LIVE_FOR_MS), and those of
 * the layout before versions (named as this build's read models are, without a version). Never
 * run by a server: an operator runs it once every process of the old build has stopped.
 */
export async function dropUnusedAt(url: string, onDrop: (name: string) => void): Promise<DropPlan> {
  const client = await new MongoClient(url).connect();
  try {
    const legacy = new Set(projectors.flatMap((p) => p.collections.map((c) => c.name)));
    return await dropUnusedReadModels(client.db(dbNameOf(url)), { users: READ_MODEL_USERS.name, checkpoints: MONGO_CHECKPOINTS, liveForMs: LIVE_FOR_MS, legacy, onDrop });
  } finally {
    await client.close();
  }
}
