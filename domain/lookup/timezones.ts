/**
 * The event time zone list for FkTimeZone (decisions.md 6): IANA names, the US zones and UTC.
 * Ids are fixed: integrators store them.
 */
export interface TimeZone {
  id: number;
  name: string;
  label: string;
}

export const EVENT_TIME_ZONES: readonly TimeZone[] = [
  { id: 1, name: 'America/New_York', label: 'Eastern Time (US & Canada)' },
  { id: 2, name: 'America/Chicago', label: 'Central Time (US & Canada)' },
  { id: 3, name: 'America/Denver', label: 'Mountain Time (US & Canada)' },
  { id: 4, name: 'America/Phoenix', label: 'Arizona (no daylight saving)' },
  { id: 5, name: 'America/Los_Angeles', label: 'Pacific Time (US & Canada)' },
  { id: 6, name: 'America/Anchorage', label: 'Alaska' },
  { id: 7, name: 'Pacific/Honolulu', label: 'Hawaii' },
  { id: 8, name: 'America/Puerto_Rico', label: 'Atlantic Time (Puerto Rico, U.S. Virgin Islands)' },
  { id: 9, name: 'Pacific/Guam', label: 'Chamorro Time (Guam, Northern Mariana Islands)' },
  { id: 10, name: 'Pacific/Pago_Pago', label: 'Samoa Time (American Samoa)' },
  { id: 11, name: 'America/Detroit', label: 'Eastern Time (Michigan)' },
  { id: 12, name: 'America/Indiana/Indianapolis', label: 'Eastern Time (Indiana)' },
  { id: 13, name: 'America/Boise', label: 'Mountain Time (Idaho)' },
  { id: 14, name: 'America/Adak', label: 'Hawaii-Aleutian Time (Aleutian Islands)' },
  { id: 15, name: 'UTC', label: 'Coordinated Universal Time (UTC)' },
];

export const timeZoneById = (id: number) => EVENT_TIME_ZONES.find((z) => z.id === id) ?? null;
