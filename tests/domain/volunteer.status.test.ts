import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../domain/shared/events.js';
import { decideUpdate, validateCreate } from '../../domain/volunteer/decide.js';
import { volunteerEvolver } from '../../domain/volunteer/events.js';
import { given as decider } from '../support/decider.js';

const TEAM = 3;
const TODAY = '2026-03-01';

/** given(events).when(PATCH body).then(events) / .thenFails(code, field): the shared decider helper. */
const given = (...events: DomainEvent[]) => ({
  when: (body: Record<string, unknown>) => decider(volunteerEvolver, events, TEAM).when((s) => decideUpdate({ id: 1, team: TEAM, body, today: TODAY }, s)),
});

const created = (fields: Record<string, unknown> = {}): DomainEvent => ({
  type: 'VolunteerCreated',
  data: { id: 1, fields: validateCreate({ FkConstituent: 9, ...fields }, '2026-01-01') },
});

describe('registering a volunteer', () => {
  it('is active as of today by default', () => expect(validateCreate({ FkConstituent: 9 }, TODAY)).toMatchObject({ IsActive: true, ActiveDate: TODAY, IsSuspended: false }));
  it('keeps an ActiveDate that was sent', () => expect(validateCreate({ FkConstituent: 9, ActiveDate: '2025-12-01' }, TODAY)).toMatchObject({ ActiveDate: '2025-12-01' }));
  it('registered inactive, is inactive as of today', () =>
    expect(validateCreate({ FkConstituent: 9, IsActive: false }, TODAY)).toMatchObject({ IsActive: false, InactiveDate: TODAY }));
  it('needs FkConstituent', () => expect(() => validateCreate({}, TODAY)).toThrow(/FkConstituent/));
});

describe('volunteer status and suspension', () => {
  it('deactivating logs an entry with InactiveDate today', () =>
    given(created()).when({ IsActive: false }).then([{ type: 'VolunteerDeactivated', data: { id: 1, InactiveDate: TODAY } }]));
  it('deactivating keeps an InactiveDate that was sent', () =>
    given(created()).when({ IsActive: false, InactiveDate: '2026-02-15' }).then([{ type: 'VolunteerDeactivated', data: { id: 1, InactiveDate: '2026-02-15' } }]));
  it('suspending logs an entry with SuspensionStartDate today', () =>
    given(created())
      .when({ IsSuspended: true })
      .then([{ type: 'VolunteerSuspended', data: { id: 1, SuspensionStartDate: TODAY, SuspensionEndDate: null } }]));
  it('lifting a suspension logs an entry', () =>
    given(created(), { type: 'VolunteerSuspended', data: { id: 1, SuspensionStartDate: '2026-02-01', SuspensionEndDate: null } })
      .when({ IsSuspended: false })
      .then([{ type: 'VolunteerSuspensionLifted', data: { id: 1, SuspensionEndDate: TODAY } }]));
  it('reactivating logs an entry with ActiveDate today', () =>
    given(created(), { type: 'VolunteerDeactivated', data: { id: 1, InactiveDate: '2026-02-01' } })
      .when({ IsActive: true })
      .then([{ type: 'VolunteerReactivated', data: { id: 1, ActiveDate: TODAY } }]));
  it('flags are plain updates', () => given(created()).when({ IsStudent: true }).then([{ type: 'VolunteerUpdated', data: { id: 1, changes: { IsStudent: true } } }]));
  it('a PATCH that changes nothing records nothing', () => given(created()).when({ IsActive: true, NumTeeShirtsNeeded: null }).then([]));
  it('FkConstituent is immutable', () => given(created()).when({ FkConstituent: 9 }).thenFails('invalid_field', 'FkConstituent'));
  it('NumTeeShirtsNeeded stays within 0..1000', () => given(created()).when({ NumTeeShirtsNeeded: 1001 }).thenFails('invalid_field', 'NumTeeShirtsNeeded'));
  it('a suspension cannot end before it starts', () =>
    given(created()).when({ IsSuspended: true, SuspensionStartDate: '2026-03-01', SuspensionEndDate: '2026-02-01' }).thenFails('invalid_field', 'SuspensionEndDate'));
  it('a new suspension does not inherit the end of an earlier one', () =>
    given(
      created(),
      { type: 'VolunteerSuspended', data: { id: 1, SuspensionStartDate: '2026-01-01', SuspensionEndDate: null } },
      { type: 'VolunteerSuspensionLifted', data: { id: 1, SuspensionEndDate: '2026-02-01' } },
    )
      .when({ IsSuspended: true })
      .then([{ type: 'VolunteerSuspended', data: { id: 1, SuspensionStartDate: TODAY, SuspensionEndDate: null } }]));
  it('a start moved past the end is refused, naming the start', () =>
    given(created(), { type: 'VolunteerSuspended', data: { id: 1, SuspensionStartDate: '2026-02-01', SuspensionEndDate: '2026-07-01' } })
      .when({ SuspensionStartDate: '2026-08-01' })
      .thenFails('invalid_field', 'SuspensionStartDate'));
  it('registered suspended, the suspension starts today', () =>
    expect(validateCreate({ FkConstituent: 9, IsSuspended: true }, TODAY)).toMatchObject({ IsSuspended: true, SuspensionStartDate: TODAY }));
  it('a locked volunteer refuses writes', () =>
    given(created(), { type: 'VolunteerLocked', data: { id: 1 } }).when({ IsStudent: true }).thenFails('record_protected', undefined as unknown as string));
});
