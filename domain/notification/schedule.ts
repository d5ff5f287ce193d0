import { dateTimeMs, formatDateTime } from '../shared/values.js';

/** decisions.md 8: what an assignment queues. */
export type NotificationKind = 'signup_confirmation' | 'task_reminder';

export interface Planned {
  id: string;
  kind: NotificationKind;
  /** UTC date-time `YYYY-MM-DDTHH:MM:SS`. */
  sendAt: string;
}

export const REMINDER_LEAD_MS = 24 * 3600_000;

/**
 * An assignment to a task that starts in the future queues a confirmation now and a reminder 24
 * hours before the start, unless that moment has passed. A past-dated task (or one without a
 * start) queues nothing. "Now" is the assignment's own time, so replaying the log plans the same.
 * Ids derive from the task and the assignment's stream revision: one plan per assignment.
 */
export function planNotifications(a: { taskId: number; revision: number; assignedAt: string; start: string | null }): Planned[] {
  if (!a.start) return [];
  const at = Date.parse(a.assignedAt);
  const start = dateTimeMs(a.start);
  if (!(start > at)) return [];
  const base = `${a.taskId}-${a.revision}`;
  const out: Planned[] = [{ id: `${base}-signup_confirmation`, kind: 'signup_confirmation', sendAt: formatDateTime(new Date(at)) }];
  const remindAt = start - REMINDER_LEAD_MS;
  if (remindAt > at) out.push({ id: `${base}-task_reminder`, kind: 'task_reminder', sendAt: formatDateTime(new Date(remindAt)) });
  return out;
}

/** A pending reminder follows a later change of the task's start; it is dropped once its moment has passed. */
export function rescheduleReminder(start: string | null, changedAt: string): string | null {
  if (!start) return null;
  const remindAt = dateTimeMs(start) - REMINDER_LEAD_MS;
  return remindAt > Date.parse(changedAt) ? formatDateTime(new Date(remindAt)) : null;
}
