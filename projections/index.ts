import { activityProjection } from './activity.js';
import { outboxProjection } from './outbox.js';
import { taskGroupsProjection } from './task-groups.js';
import { volunteerTasksProjection } from './volunteer-tasks.js';
import { volunteersProjection } from './volunteers.js';
import { eventTicketsProjection } from './event-tickets.js';
import { eventsProjection } from './events.js';
import { constituentsProjection } from './constituents.js';
import { donationsProjection, recurringGiftsProjection } from './donations.js';
import { webhookEndpointsProjection } from './webhook-endpoints.js';
import { lookupsProjection } from './lookups.js';
import type { Projector } from './engine/projector.js';
import { teamsProjection } from './teams.js';

/** Every read model, in the order they are applied to each event. */
export const projectors: Projector[] = [teamsProjection, constituentsProjection, lookupsProjection, donationsProjection, recurringGiftsProjection, webhookEndpointsProjection, eventsProjection, eventTicketsProjection, volunteersProjection, taskGroupsProjection, volunteerTasksProjection, outboxProjection, activityProjection];
