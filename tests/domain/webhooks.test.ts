import { describe, expect, it } from 'vitest';
import { constituentEvolver, type ConstituentEvent } from '../../domain/constituent/events.js';
import { constituentWebhooks } from '../../domain/constituent/webhooks.js';
import { donationEvolver, type DonationEvent } from '../../domain/donation/events.js';
import { donationWebhooks } from '../../domain/donation/webhooks.js';
import { DEFAULT_PUBLIC_FORM } from '../../domain/event/creation.js';
import type { EventEvent } from '../../domain/event/events.js';
import { appendedWith, EVENT_UPDATE_FIELDS, eventWebhookEvolver, eventWebhooks } from '../../domain/event/webhooks.js';
import { recurringGiftEvolver, type RecurringGiftEvent } from '../../domain/recurring-gift/events.js';
import { recurringGiftWebhooks } from '../../domain/recurring-gift/webhooks.js';
import type { DomainEvent, Evolver } from '../../domain/shared/events.js';
import type { Fires, WriteOf } from '../../domain/shared/webhooks.js';
import { taskEvolver, type TaskEvent } from '../../domain/volunteer-task/events.js';
import { taskWebhooks } from '../../domain/volunteer-task/webhooks.js';
import { volunteerEvolver, type VolunteerEvent } from '../../domain/volunteer/events.js';
import { volunteerWebhooks } from '../../domain/volunteer/webhooks.js';

const META = { team: 1, at: '2026-11-01T12:00:00.000Z' };

/**
 * given(past events).fires(event, ...appended with it): the webhooks `event` fires, its rules
 * given the record folded up to just before it and just after it (and the events appended with it).
 */
function given<S, E extends DomainEvent>(evolver: Evolver<S, E>, rules: (e: E, before: S, after: S, write: WriteOf) => Fires, ...past: E[]) {
  const fold = (s: S, e: E) => evolver.evolve(s, { ...e, metadata: META });
  const before = past.reduce(fold, evolver.initial());
  return {
    /** The rules of `event`, stored with `together` after it in one write. */
    fires: (event: E, ...together: E[]) => rules(event, before, [event, ...together].reduce(fold, before), { joined: together, opens: true }),
    /** The rules of `event`, stored after another event of its own write. */
    firesFollowing: (event: E) => rules(event, before, fold(before, event), { joined: [], opens: false }),
  };
}

const after = (type: string) => ({ type, state: 'after' });
const before = (type: string) => ({ type, state: 'before' });

describe('the common rule of record resources (constituents)', () => {
  const ada: ConstituentEvent = { type: 'ConstituentCreated', data: { id: 1, fields: { FirstName: 'Ada' } } };
  const constituent = (...past: ConstituentEvent[]) => given(constituentEvolver, constituentWebhooks, ...past);

  it('fires created, showing the record after', () => expect(constituent().fires(ada)).toEqual([after('constituent.created')]));
  it('fires updated when a public field changed', () =>
    expect(constituent(ada).fires({ type: 'ConstituentUpdated', data: { id: 1, changes: { FirstName: 'Augusta' } } })).toEqual([after('constituent.updated')]));
  it('fires nothing for an update that changes nothing, or a lock', () => {
    expect(constituent(ada).fires({ type: 'ConstituentUpdated', data: { id: 1, changes: { FirstName: 'Ada' } } })).toEqual([]);
    expect(constituent(ada).fires({ type: 'ConstituentLocked', data: { id: 1 } })).toEqual([]);
  });
  it('fires deleted for a live record, showing it as it was before', () => {
    expect(constituent(ada).fires({ type: 'ConstituentDeleted', data: { id: 1 } })).toEqual([before('constituent.deleted')]);
    expect(constituent(ada, { type: 'ConstituentDeleted', data: { id: 1 } }).fires({ type: 'ConstituentDeleted', data: { id: 1 } })).toEqual([]);
  });
});

describe('volunteer webhooks', () => {
  const created: VolunteerEvent = { type: 'VolunteerCreated', data: { id: 1, fields: { FkConstituent: 9, IsActive: true } } };
  it('fires volunteer.updated for a status entry that changes the record', () =>
    expect(given(volunteerEvolver, volunteerWebhooks, created).fires({ type: 'VolunteerDeactivated', data: { id: 1, InactiveDate: '2026-03-01' } })).toEqual([
      after('volunteer.updated'),
    ]));
  it('fires one volunteer.updated a write: from its first event, showing the volunteer as the whole write left it (decisions.md 7)', () => {
    const volunteer = given(volunteerEvolver, volunteerWebhooks, created);
    const edit: VolunteerEvent = { type: 'VolunteerUpdated', data: { id: 1, changes: { IsTeamMember: true } } };
    const deactivated: VolunteerEvent = { type: 'VolunteerDeactivated', data: { id: 1, InactiveDate: '2026-03-01' } };
    expect(volunteer.fires(edit, deactivated)).toEqual([after('volunteer.updated')]);
    expect(volunteer.firesFollowing(deactivated)).toEqual([]);
  });
  it('fires created and deleted by the common rule', () => {
    expect(given(volunteerEvolver, volunteerWebhooks).fires(created)).toEqual([after('volunteer.created')]);
    expect(given(volunteerEvolver, volunteerWebhooks, created).fires({ type: 'VolunteerDeleted', data: { id: 1 } })).toEqual([before('volunteer.deleted')]);
  });
});

describe('task person-events (spec 6.4, decisions.md 7)', () => {
  const created: TaskEvent = { type: 'VolunteerTaskCreated', data: { id: 1, fields: { VolunteerTaskTitle: 'Knock doors' } } };
  const assigned: TaskEvent = {
    type: 'VolunteerTaskAssigned',
    data: { id: 1, volunteerId: 5, previousVolunteerId: null, via: 'signup', DateAssigned: '2026-11-01T12:00:00' },
  };
  const task = (...past: TaskEvent[]) => given(taskEvolver, taskWebhooks, ...past);
  const unassigned = (reason: 'unassigned' | 'canceled' | 'volunteer_deleted'): TaskEvent => ({ type: 'VolunteerTaskUnassigned', data: { id: 1, volunteerId: 5, reason } });

  const updated = after('volunteer_task.updated');
  it('fires signed_up for an assignment, and a reassignment, then the volunteer_task.updated that accompanies it', () => {
    expect(task(created).fires(assigned)).toEqual([after('volunteer_task.signed_up'), updated]);
    expect(task(created, assigned).fires({ ...assigned, data: { ...assigned.data, volunteerId: 6, previousVolunteerId: 5 } })).toEqual([
      after('volunteer_task.signed_up'),
      updated,
    ]);
  });
  it('fires canceled when the volunteer canceled, unassigned otherwise, each with its volunteer_task.updated', () => {
    expect(task(created, assigned).fires(unassigned('canceled'))).toEqual([after('volunteer_task.canceled'), updated]);
    expect(task(created, assigned).fires(unassigned('unassigned'))).toEqual([after('volunteer_task.unassigned'), updated]);
    expect(task(created, assigned).fires(unassigned('volunteer_deleted'))).toEqual([after('volunteer_task.unassigned'), updated]);
  });
  it('fires nothing for the update a person-event follows in its write (that event fires the write\'s updated), updated for one standing alone', () => {
    const change: TaskEvent = { type: 'VolunteerTaskUpdated', data: { id: 1, changes: { FkVolunteer: 5 } } };
    expect(task(created).fires(change, assigned)).toEqual([]);
    expect(task(created, assigned).fires({ type: 'VolunteerTaskUpdated', data: { id: 1, changes: { FkVolunteer: null } } }, unassigned('canceled'))).toEqual([]);
    expect(task(created).fires({ type: 'VolunteerTaskUpdated', data: { id: 1, changes: { VolunteerTaskTitle: 'Phone bank' } } })).toEqual([updated]);
  });
});

describe('donation webhooks', () => {
  const gift: DonationEvent = { type: 'DonationCreated', data: { id: 1, fields: { Amount: 50 } } };
  const donation = (...past: DonationEvent[]) => given(donationEvolver, donationWebhooks, ...past);

  it('fires donation.refunded, not created, for a refund (a donation of its own)', () => {
    expect(donation().fires({ type: 'DonationCreated', data: { id: 2, fields: { RefundAmount: 20, FkRefundedDonation: 1 } } })).toEqual([after('donation.refunded')]);
    expect(donation().fires(gift)).toEqual([after('donation.created')]);
  });
  it('fires nothing for the refunded gift itself', () =>
    expect(donation(gift).fires({ type: 'DonationRefunded', data: { id: 1, refundId: 2, Amount: 20 } })).toEqual([]));
  it('fires receipted and thanked once each', () => {
    const receipted: DonationEvent = { type: 'DonationReceipted', data: { id: 1 } };
    const thanked: DonationEvent = { type: 'DonationThanked', data: { id: 1 } };
    expect(donation(gift).fires(receipted)).toEqual([after('donation.receipted')]);
    expect(donation(gift, receipted).fires(receipted)).toEqual([]);
    expect(donation(gift).fires(thanked)).toEqual([after('donation.thanked')]);
    expect(donation(gift, thanked).fires(thanked)).toEqual([]);
  });
});

describe('recurring gift webhooks', () => {
  const set: RecurringGiftEvent = { type: 'RecurringGiftCreated', data: { id: 1, fields: { Amount: 10 } } };
  const canceled: RecurringGiftEvent = { type: 'RecurringGiftCanceled', data: { id: 1 } };
  const gift = (...past: RecurringGiftEvent[]) => given(recurringGiftEvolver, recurringGiftWebhooks, ...past);

  it('fires recurring_started when set up', () => expect(gift().fires(set)).toEqual([after('donation.recurring_started')]));
  it('fires recurring_canceled once', () => {
    expect(gift(set).fires(canceled)).toEqual([after('donation.recurring_canceled')]);
    expect(gift(set, canceled).fires(canceled)).toEqual([]);
  });
});

describe('event webhooks (spec 6.2, decisions.md 7)', () => {
  const created = (fields: Record<string, unknown>): EventEvent => ({ type: 'EventCreated', data: { id: 1, fields } });
  const updated = (changes: Record<string, unknown>): EventEvent => ({ type: 'EventUpdated', data: { id: 1, changes } });
  const deleted: EventEvent = { type: 'EventDeleted', data: { id: 1 } };
  const gala = created({ EventTitle: 'Gala', StartTime: '18:00' });
  const event = (...past: EventEvent[]) => given(eventWebhookEvolver, eventWebhooks, ...past);

  it('fires event.created once the event has a title', () => {
    expect(event().fires(gala)).toEqual([after('event.created')]);
    expect(event().fires(created({ EventTitle: ' ' }))).toEqual([]);
    expect(event(created({})).fires(updated({ EventTitle: 'Gala' }))).toEqual([after('event.created')]);
  });
  it('fires event.updated only when a listed field changed', () => {
    expect(event(gala).fires(updated({ StartTime: '19:00' }))).toEqual([after('event.updated')]);
    expect(event(gala).fires(updated({ Theme: 'Blue' }))).toEqual([]);
    expect(event(gala).fires(updated({ StartTime: '18:00' }))).toEqual([]);
    expect(EVENT_UPDATE_FIELDS).toEqual(expect.arrayContaining(['StartDate', 'StartTime', 'EventLocation', 'ContactEmail', 'MaxGuests', 'FkStatus', 'FkEventType']));
    expect(EVENT_UPDATE_FIELDS).not.toContain('EventTitle');
  });
  it('fires event.deleted only for a titled event, showing it as it was', () => {
    expect(event(gala).fires(deleted)).toEqual([before('event.deleted')]);
    expect(event(created({})).fires(deleted)).toEqual([]);
    expect(event(gala, deleted).fires(deleted)).toEqual([]);
  });
  it('shows the creation together with the form defaults appended with it', () => {
    const defaults: EventEvent = { type: 'EventPublicFormDefaultsApplied', data: { id: 1, defaults: { ...DEFAULT_PUBLIC_FORM, IsPublic: true } } };
    const together = appendedWith(gala);
    expect(together?.(defaults)).toBe(true);
    expect(together?.(updated({}))).toBe(false);
    expect(appendedWith(updated({}))).toBeUndefined();
    const shown = [gala, defaults].reduce((s, e) => eventWebhookEvolver.evolve(s, { ...e, metadata: META }), eventWebhookEvolver.initial());
    expect(shown.fields).toMatchObject({ EventTitle: 'Gala', IsPublic: true, IsTicketSales: false });
    expect(event().fires(gala, defaults)).toEqual([after('event.created')]);
    expect(event(gala).fires(defaults)).toEqual([]);
  });
});
