/**
 * The fields a task read shows of its assigned volunteer, and the volunteer's fields they come
 * from (the volunteer's own copies of its constituent's name and contacts). One home for the
 * derivation the task read model, a task's history and its webhook payloads each make; all null
 * together when unassigned (spec 2.3).
 */
export const TASK_VOLUNTEER_FIELDS = { ConstituentName: 'VolunteerName', Email1: 'VolunteerEmail', Phone1: 'VolunteerPhone' } as const;

type TaskVolunteerField = (typeof TASK_VOLUNTEER_FIELDS)[keyof typeof TASK_VOLUNTEER_FIELDS];

/** The task's volunteer fields from the volunteer's (a read model's document, or its state's fields); null for none. */
export function taskVolunteerFields(volunteer: Readonly<Record<string, unknown>> | null | undefined): Record<TaskVolunteerField, unknown> {
  return {
    VolunteerName: volunteer?.ConstituentName ?? null,
    VolunteerEmail: volunteer?.Email1 ?? null,
    VolunteerPhone: volunteer?.Phone1 ?? null,
  };
}
