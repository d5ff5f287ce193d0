import { CONSTITUENT_FIELDS } from '../domain/constituent/rules.js';
import { EVENT_FIELDS } from '../domain/event/rules.js';
import { TASK_FIELDS } from '../domain/volunteer-task/rules.js';
import { VOLUNTEER_FIELDS } from '../domain/volunteer/rules.js';
import { writeBody } from './fields.js';

// The create routes' bodies, here rather than in api/schemas/ because the command line checks
// each import row against the same schema before it sends anything (cli/validate.ts).
export const ConstituentBody = writeBody(CONSTITUENT_FIELDS);
export const CreateVolunteerBody = writeBody(VOLUNTEER_FIELDS, ['FkConstituent']);
export const CreateTaskBody = writeBody(TASK_FIELDS, ['VolunteerTaskTitle']);
export const EventCreateBody = writeBody(EVENT_FIELDS, ['EventTitle']);
