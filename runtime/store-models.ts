import { feedModelProjector } from '../dispatcher/feed-model.js';
import type { StreamReader } from '../dispatcher/history.js';
import type { Projector } from '../projections/engine/projector.js';
import { productProjectors } from '../projections/index.js';

/**
 * The read models a read store keeps where they are not the data dir's file (MongoDB, in memory):
 * the product's (the ticket sales reading a deleted linked record's stream from `log`), and the
 * change feed's collection (dispatcher/feed-model.ts), whose projector reads payloads as of each
 * change from `log`. One list for the runner, the collections' layout,
 * the build's name and summary, the lease and the registration that `turnout rebuild
 * --drop-unused` reads, so the feed is versioned, built and kept like every other read model.
 */
export const storeProjectors = (log: StreamReader): Projector[] => [...productProjectors(log), feedModelProjector(log)];
