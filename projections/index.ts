import { activityProjection } from './activity.js';
import { constituentsProjection } from './constituents.js';
import { lookupsProjection } from './lookups.js';
import type { Projector } from './runner.js';
import { teamsProjection } from './teams.js';

/** Every read model, in the order they are applied to each event. */
export const projectors: Projector[] = [teamsProjection, constituentsProjection, lookupsProjection, activityProjection];
