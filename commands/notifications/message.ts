import type { NotificationDoc } from '../../projections/outbox.js';
import type { Doc } from '../../projections/store/port.js';
import type { MailMessage } from './transport.js';

const line = (label: string, v: unknown) => (v === null || v === undefined || v === '' ? [] : [`${label}: ${String(v)}`]);

/** The text of a confirmation or reminder, from the task as it reads when the message goes out. */
export function composeMessage(n: NotificationDoc, task: Doc | null, from: string): MailMessage {
  const title = (task?.VolunteerTaskTitle as string | undefined) ?? `task ${n.taskId}`;
  const subject = n.kind === 'task_reminder' ? `Reminder: ${title} starts within 24 hours` : `You're signed up: ${title}`;
  const where = [task?.DeliveryLocationName, task?.DeliveryLocationAddress, task?.DeliveryLocationCity, task?.DeliveryLocationState]
    .filter((v) => v)
    .join(', ');
  const text = [
    n.kind === 'task_reminder' ? `This is a reminder of the volunteer task you signed up for.` : `Thank you for signing up for this volunteer task.`,
    '',
    `Task: ${title}`,
    ...line('Starts (UTC)', task?.TaskStartDateTime),
    ...line('Ends (UTC)', task?.TaskEndDateTime),
    ...line('Where', where),
    ...line('Parking', task?.DeliveryLocationParkingInstructions),
    ...line('Contact', [task?.ContactName, task?.ContactEmail, task?.ContactPhone].filter((v) => v).join(', ')),
  ].join('\n');
  return { id: n.id, from, to: n.to!, subject, text };
}
