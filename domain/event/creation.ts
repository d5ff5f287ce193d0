import { EVENT_FIELDS, GEOGRAPHY_READ_FIELDS } from './rules.js';
/**
 * What the in-app Add Event sets up besides the event's own fields (spec 2.5, creation behaviour).
 * Teams have no settings surface for these yet, so every team starts from the product defaults
 * below; the command passes them in, so a team's own defaults can replace them without touching
 * the decider.
 */

export interface NotificationTemplate {
  kind: string;
  subject: string;
  enabled: boolean;
}

/** The emails every new event starts with; each is editable in the application. */
export const DEFAULT_NOTIFICATION_TEMPLATES: readonly NotificationTemplate[] = [
  { kind: 'registration_confirmation', subject: 'You are registered for {EventTitle}', enabled: true },
  { kind: 'ticket_receipt', subject: 'Your tickets for {EventTitle}', enabled: true },
  { kind: 'event_reminder', subject: 'Reminder: {EventTitle} is coming up', enabled: true },
  { kind: 'registration_canceled', subject: 'Your registration for {EventTitle} is canceled', enabled: true },
  { kind: 'event_updated', subject: '{EventTitle} has changed', enabled: false },
];

export interface PublicFormDefaults {
  /** Read fields of the event; not writable through the API (spec 2.5). */
  IsPublic: boolean;
  IsTicketSales: boolean;
  /** The public registration form's design: history only, never on reads. */
  form: { fields: string[]; requiredFields: string[]; collectGuestNames: boolean; confirmationMessage: string };
}

/** A new event is unpublished and sells no tickets until someone turns that on in the application. */
export const DEFAULT_PUBLIC_FORM: PublicFormDefaults = {
  IsPublic: false,
  IsTicketSales: false,
  form: {
    fields: ['FirstName', 'LastName', 'Email1', 'Phone1'],
    requiredFields: ['FirstName', 'LastName', 'Email1'],
    collectGuestNames: false,
    confirmationMessage: 'Thank you for registering.',
  },
};

/** The fields of the defaults that events read back. */
export const FORM_READ_FIELDS = ['IsPublic', 'IsTicketSales'] as const;

/** The read fields an EventPublicFormDefaultsApplied sets. */
export const formReadValues = (defaults: PublicFormDefaults) => Object.fromEntries(FORM_READ_FIELDS.map((f) => [f, defaults[f] ?? null]));

/** Every field of an event read and payload, in order. */
export const EVENT_READ_FIELDS = [...Object.keys(EVENT_FIELDS), ...FORM_READ_FIELDS, ...GEOGRAPHY_READ_FIELDS];
