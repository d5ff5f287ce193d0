import type { Category } from '../domain/events.js';
import type { RecordedEvent } from '../domain/shared/events.js';
import type { Projector } from './engine/projector.js';
import { and, eq, type Query } from './store/port.js';

export const ACTIVITY = 'activity';

/**
 * Streams that hold records (category -> record type). Id blocks and claim guards are
 * bookkeeping, not changes, and stay out of the activity log.
 */
const RECORD_CATEGORY_LIST: Category[] = [
  'team',
  'constituent',
  'volunteer',
  'volunteer_task',
  'volunteer_task_group',
  'event',
  'event_ticket',
  'donation',
  'recurring_gift',
  'webhook_endpoint',
  'lookup',
];
const RECORD_CATEGORIES = new Set<string>(RECORD_CATEGORY_LIST);

const pascal = (snake: string) => snake.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
const snake = (p: string) => p.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** `volunteer_task-5` + `VolunteerTaskAssigned` -> {recordType: volunteer_task, recordId: 5, action: assigned}. */
export function describeChange(e: RecordedEvent): { recordType: string; recordId: number; action: string } | null {
  const dash = e.stream.lastIndexOf('-');
  if (dash < 0) return null;
  const recordType = e.stream.slice(0, dash);
  const recordId = Number(e.stream.slice(dash + 1));
  if (!RECORD_CATEGORIES.has(recordType) || !Number.isInteger(recordId)) return null;
  return { recordType, recordId, action: actionOf(recordType, e.type) };
}

/** `volunteer_task` + `VolunteerTaskAssigned` -> `assigned`, worked out once per pair. */
const actions = new Map<string, string>();
function actionOf(recordType: string, type: string): string {
  const key = `${recordType} ${type}`;
  let action = actions.get(key);
  if (action === undefined) {
    const prefix = pascal(recordType);
    actions.set(key, (action = snake(type.startsWith(prefix) ? type.slice(prefix.length) : type)));
  }
  return action;
}

/** The account's activity log: every change, labelled with its source and key name. */
export const activityProjection: Projector = {
  name: ACTIVITY,
  // 2: entries stored without what their columns hold, fields keyed by place (sqlite-schema.ts storedDoc).
  version: 2,
  // Every entry holds these (keyName null for the application's own changes): declared, so the
  // SQLite store keys them by place, not name.
  collections: [{ name: ACTIVITY, idField: 'id', indexes: [['FkTeam']], fields: ['at', 'source', 'keyName', 'action', 'recordType', 'recordId'] }],
  categories: RECORD_CATEGORY_LIST,
  independent: true,
  async apply(event, store) {
    const change = describeChange(event);
    if (!change || !event.metadata.team) return;
    // Keyed by log position, so a replayed event rewrites the same entry.
    await store.put(ACTIVITY, {
      id: Number(event.position.prepare),
      FkTeam: event.metadata.team,
      at: event.metadata.at,
      source: event.metadata.source,
      keyName: event.metadata.keyName,
      action: change.action,
      recordType: change.recordType,
      recordId: change.recordId,
    });
  },
};

/** The team's activity, newest first, optionally only one key's (`keyName`) or one source's. */
export const activityQuery = (team: number, page: { page: number; pageSize: number }, only: { keyName?: string; source?: string } = {}): Query => ({
  collection: ACTIVITY,
  filter: and(eq('FkTeam', team), only.keyName !== undefined && eq('keyName', only.keyName), only.source !== undefined && eq('source', only.source)),
  sort: [{ field: 'id', dir: 'desc' }],
  page,
});
