import { describe, expect, it } from 'vitest';
import { DomainError } from '../../domain/shared/errors.js';
import { decideUpsert, upsertEmail } from '../../domain/constituent/upsert.js';

const failure = (run: () => unknown) => {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    return e as DomainError;
  }
  throw new Error('expected a DomainError');
};

describe('deciding an upsert by email', () => {
  it('creates when no active constituent has the email', () => {
    expect(decideUpsert('lin@example.org', { total: 0, ids: [] })).toEqual({ action: 'create' });
  });

  it('updates the one active constituent with the email', () => {
    expect(decideUpsert('lin@example.org', { total: 1, ids: [42] })).toEqual({ action: 'update', id: 42 });
  });

  it('refuses several matches as ambiguous, counting them all', () => {
    const e = failure(() => decideUpsert('lin@example.org', { total: 3, ids: [4, 9] }));
    expect(e.code).toBe('ambiguous_match');
    expect(e.message).toBe('3 active constituents have Email1 lin@example.org; update one by id instead.');
  });
});

describe('the email an upsert matches on', () => {
  it('is the normalised Email1 of the body, whatever else is missing', () => {
    expect(upsertEmail({ Email1: 'Lin@Example.org', Phone1: '(555) 867-5309' })).toBe('Lin@Example.org');
  });

  it('is required: absent is missing_field, sent as null invalid_field (integration-api §7: missing_field is a required field absent)', () => {
    const absent = failure(() => upsertEmail({ LastName: 'X' }));
    expect([absent.code, absent.field]).toEqual(['missing_field', 'Email1']);
    const nulled = failure(() => upsertEmail({ LastName: 'X', Email1: null }));
    expect([nulled.code, nulled.field]).toEqual(['invalid_field', 'Email1']);
  });

  it('comes after the checks of every sent field', () => {
    expect(failure(() => upsertEmail({ Email1: 'a@b.org', Nope: 1 })).code).toBe('unknown_field');
    expect(failure(() => upsertEmail({ Email1: 'not-an-email' })).field).toBe('Email1');
  });
});
