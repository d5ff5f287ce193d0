import type { NotificationDoc } from '../../projections/outbox.js';
import type { Doc } from '../../projections/store/port.js';
import type { MailMessage } from './transport.js';

const line = (label: string, v: unknown) => (v === null || v === undefined || v === '' ? [] : [`${label}: ${String(v)}`]);

const DISABLED_BECAUSE: Record<string, string> = {
  gone: 'it answered 410 Gone',
  failing: 'every delivery attempt to it failed for too long',
};

/** decisions.md 12: the alert to the team's alertEmail that the dispatcher disabled an endpoint. */
function composeEndpointDisabled(n: NotificationDoc, endpoint: Doc | null, from: string): MailMessage {
  const why = DISABLED_BECAUSE[String(endpoint?.disabledReason)] ?? 'its deliveries kept failing';
  const text = [
    `Turnout stopped sending webhooks to endpoint ${n.endpointId} because ${why}.`,
    '',
    ...line('URL', endpoint?.url),
    ...line('Disabled at (UTC)', endpoint?.disabledAt),
    '',
    'Fix the receiver, then set the endpoint active again (PATCH with {"active": true}).',
    'Events from while it was disabled are not resent by re-enabling it; a replay sends them.',
  ].join('\n');
  return { id: n.id, from, to: n.to!, subject: `Webhook endpoint ${n.endpointId} disabled`, text };
}

/** The text of a message, from the record it is about as it reads when the message goes out. */
export function composeMessage(n: NotificationDoc, about: Doc | null, from: string): MailMessage {
  if (n.kind === 'endpoint_disabled') return composeEndpointDisabled(n, about, from);
  const task = about;
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
