import { describe, expect, it } from 'vitest';
import { planNotifications, rescheduleReminder } from '../../domain/notification/schedule.js';

describe('planning notifications for an assignment', () => {
  const at = '2026-03-01T12:00:00.000Z';
  it('queues a confirmation now and a reminder 24 hours before a future start', () =>
    expect(planNotifications({ taskId: 4, revision: 2, assignedAt: at, start: '2026-03-05T18:00:00' })).toEqual([
      { id: '4-2-signup_confirmation', kind: 'signup_confirmation', sendAt: '2026-03-01T12:00:00' },
      { id: '4-2-task_reminder', kind: 'task_reminder', sendAt: '2026-03-04T18:00:00' },
    ]));
  it('queues no reminder when its moment has passed', () =>
    expect(planNotifications({ taskId: 4, revision: 2, assignedAt: at, start: '2026-03-02T06:00:00' }).map((p) => p.kind)).toEqual(['signup_confirmation']));
  it('queues nothing for a past-dated task', () => expect(planNotifications({ taskId: 4, revision: 2, assignedAt: at, start: '2026-02-01T10:00:00' })).toEqual([]));
  it('queues nothing for a task without a start', () => expect(planNotifications({ taskId: 4, revision: 2, assignedAt: at, start: null })).toEqual([]));
  it('moves a reminder with its start, and drops it once passed', () => {
    expect(rescheduleReminder('2026-03-10T10:00:00', at)).toBe('2026-03-09T10:00:00');
    expect(rescheduleReminder('2026-03-02T10:00:00', at)).toBeNull();
  });
});
