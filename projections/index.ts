import { activityProjection } from './activity.js';
import { outboxProjection } from './outbox.js';
import { taskGroupsProjection } from './task-groups.js';
import { volunteerTasksProjection } from './volunteer-tasks.js';
import { volunteersProjection } from './volunteers.js';
import { eventTicketsProjector, type LinkedStreams } from './event-tickets.js';
import { eventsProjection } from './events.js';
import { constituentsProjection } from './constituents.js';
import { donationsProjection, recurringGiftsProjection } from './donations.js';
import { webhookEndpointsProjection } from './webhook-endpoints.js';
import { lookupsProjection } from './lookups.js';
import type { Projector } from './engine/projector.js';
import { teamsProjection } from './teams.js';

/**
 * Every read model, in the order they are applied to each event. `log`: where the ticket sales
 * read the stream of a linked record deleted since (event-tickets.ts), so that they read the same
 * whether applied with the others or alone.
 */
export const productProjectors = (log: LinkedStreams): Projector[] => [
  teamsProjection,
  constituentsProjection,
  lookupsProjection,
  donationsProjection,
  recurringGiftsProjection,
  webhookEndpointsProjection,
  eventsProjection,
  eventTicketsProjector(log),
  volunteersProjection,
  taskGroupsProjection,
  volunteerTasksProjection,
  outboxProjection,
  activityProjection,
];

const NO_LOG: LinkedStreams = {
  readStream: () => Promise.reject(new Error('the read models of `projectors` are not applied: apply productProjectors(log)')),
};

/**
 * The same read models, for what they are (names, versions, collections, the categories they
 * read), not to apply: they are given no log (productProjectors is).
 */
export const projectors: Projector[] = productProjectors(NO_LOG);
