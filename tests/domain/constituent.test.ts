import { describe, expect, it } from 'vitest';
import { decideCreate, decideUpdate, validateCreate } from '../../domain/constituent/decide.js';
import { constituentEvolver } from '../../domain/constituent/events.js';
import { decideDelete, decideLock } from '../../domain/shared/record.js';
import { given, TEAM } from '../support/decider.js';

const create = (body: Record<string, unknown>, id = 7) => (s: typeof constituentEvolver extends { initial: () => infer S } ? S : never) =>
  decideCreate({ id, fields: validateCreate(body) }, s);
const update = (body: Record<string, unknown>, id = 7, team = TEAM) => (s: Parameters<typeof decideUpdate>[1]) => decideUpdate({ id, team, body }, s);
const ada = { type: 'ConstituentCreated', data: { id: 7, fields: { FirstName: 'Ada', LastName: 'Lovelace', ConstituentName: 'Ada Lovelace', FkConstituentType: 1, IsActiveConstituent: true, Email1: 'ada@example.org' } } };

describe('creating a constituent', () => {
  it('keeps an individual display name in sync from first and last name', () => {
    given(constituentEvolver).when(create({ FirstName: ' Ada', LastName: 'Lovelace', ConstituentName: 'ignored' })).then(([e]) => {
      expect(e.type).toBe('ConstituentCreated');
      expect((e.data.fields as Record<string, unknown>).ConstituentName).toBe('Ada Lovelace');
    });
  });

  it('defaults to an active individual', () => {
    given(constituentEvolver).when(create({ LastName: 'Hopper' })).then(([e]) => {
      expect(e.data.fields).toMatchObject({ FkConstituentType: 1, IsActiveConstituent: true, ConstituentName: 'Hopper' });
    });
  });

  it('refuses an individual without first or last name', () => {
    given(constituentEvolver).when(create({ Email1: 'x@example.org' })).thenFails('missing_field', 'FirstName');
    given(constituentEvolver).when(create({ FirstName: '  ' })).thenFails('invalid_field', 'FirstName');
  });

  it('needs ConstituentName for households and organizations', () => {
    given(constituentEvolver).when(create({ FkConstituentType: 3 })).thenFails('missing_field', 'ConstituentName');
    given(constituentEvolver).when(create({ FkConstituentType: 2, ConstituentName: 'The Smiths' })).then(([e]) => {
      expect((e.data.fields as Record<string, unknown>).ConstituentName).toBe('The Smiths');
    });
  });

  it.each([
    ['Email1', 'not-an-email'],
    ['Phone1', '555-1234'],
    ['Phone2', '1-800-FLOWERS'],
    ['MailingState', 'Atlantis'],
    ['DateOfBirth', '2026-02-30'],
    ['FkConstituentType', 4],
    ['FirstName', 'x'.repeat(51)],
    ['Salutation', 'x'.repeat(151)],
    ['Website1', 'x'.repeat(501)],
    ['IsEmailOk', 'true'],
    ['FkConstituentType', '1'],
  ])('refuses an invalid %s', (field, value) => {
    given(constituentEvolver).when(create({ LastName: 'X', [field]: value })).thenFails('invalid_field', field);
  });

  it('normalises phones, states and keeps email case', () => {
    given(constituentEvolver)
      .when(create({ LastName: 'X', Phone1: '+1 (555) 867-5309', Phone3: '555.867.5309', MailingState: 'new york', Email1: 'Ada@Example.org' }))
      .then(([e]) => expect(e.data.fields).toMatchObject({ Phone1: '5558675309', Phone3: '5558675309', MailingState: 'NY', Email1: 'Ada@Example.org' }));
  });

  it('refuses unknown and read-only fields by name', () => {
    given(constituentEvolver).when(create({ LastName: 'X', Shoe: 1 })).thenFails('unknown_field', 'Shoe');
    given(constituentEvolver).when(create({ LastName: 'X', PkConstituent: 1 })).thenFails('unknown_field', 'PkConstituent');
    // Names every object has are not fields either.
    given(constituentEvolver).when(create({ LastName: 'X', constructor: 'x' })).thenFails('unknown_field', 'constructor');
    given(constituentEvolver).when(create({ LastName: 'X', toString: 'x' })).thenFails('unknown_field', 'toString');
  });
});

describe('updating a constituent', () => {
  it('changes only the sent fields', () => {
    given(constituentEvolver, [ada]).when(update({ Nickname: 'Countess' })).then([{ type: 'ConstituentUpdated', data: { id: 7, changes: { Nickname: 'Countess' } } }]);
  });

  it('records nothing when nothing changes', () => {
    given(constituentEvolver, [ada]).when(update({ FirstName: 'Ada', Email1: 'ada@example.org' })).then([]);
  });

  it('re-derives the display name when a name changes', () => {
    given(constituentEvolver, [ada]).when(update({ LastName: 'King' })).then([
      { type: 'ConstituentUpdated', data: { id: 7, changes: { LastName: 'King', ConstituentName: 'Ada King' } } },
    ]);
  });

  it('clears optional fields with null but not required ones', () => {
    given(constituentEvolver, [ada]).when(update({ Email1: null })).then([{ type: 'ConstituentUpdated', data: { id: 7, changes: { Email1: null } } }]);
    given(constituentEvolver, [ada]).when(update({ FkConstituentType: null })).thenFails('invalid_field', 'FkConstituentType');
    given(constituentEvolver, [ada]).when(update({ FirstName: null, LastName: null })).thenFails('invalid_field', 'FirstName');
  });

  it('is not found for another team or a missing or deleted record', () => {
    given(constituentEvolver, [ada]).when(update({ Nickname: 'x' }, 7, 2)).thenFails('not_found');
    given(constituentEvolver).when(update({ Nickname: 'x' })).thenFails('not_found');
    given(constituentEvolver, [ada, { type: 'ConstituentDeleted', data: { id: 7 } }]).when(update({ Nickname: 'x' })).thenFails('not_found');
  });

  it('refuses writes to a locked record until it is unlocked', () => {
    const locked = [ada, { type: 'ConstituentLocked', data: { id: 7 } }];
    given(constituentEvolver, locked).when(update({ Nickname: 'x' })).thenFails('record_protected');
    given(constituentEvolver, [...locked, { type: 'ConstituentUnlocked', data: { id: 7 } }]).when(update({ Nickname: 'x' })).then(([e]) => expect(e.type).toBe('ConstituentUpdated'));
  });
});

describe('locking and deleting', () => {
  it('locks once and unlocks once', () => {
    given(constituentEvolver, [ada]).when((s) => decideLock('Constituent', s, TEAM, 'constituent', 7, true)).then([{ type: 'ConstituentLocked', data: { id: 7 } }]);
    given(constituentEvolver, [ada, { type: 'ConstituentLocked', data: { id: 7 } }]).when((s) => decideLock('Constituent', s, TEAM, 'constituent', 7, true)).then([]);
  });

  it('deletes an existing record only', () => {
    given(constituentEvolver, [ada]).when((s) => decideDelete('Constituent', s, TEAM, 'constituent', 7)).then([{ type: 'ConstituentDeleted', data: { id: 7 } }]);
    given(constituentEvolver).when((s) => decideDelete('Constituent', s, TEAM, 'constituent', 7)).thenFails('not_found');
  });
});
