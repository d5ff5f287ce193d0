import { describe, expect, it } from 'vitest';
import { stateCode } from '../../domain/shared/states.js';
import fc from 'fast-check';
import { formatDateTime, parseDate, parseDateTime, parseEmail, parsePhone, parseTime, utcSecondsOf } from '../../domain/shared/values.js';
import { normaliseValue } from '../../domain/shared/fields.js';

describe('value rules (decisions.md 3)', () => {
  it('accepts only calendar dates', () => {
    expect(parseDate('2024-02-29')).toBe('2024-02-29');
    expect(parseDate('2026-02-29')).toBeNull();
    expect(parseDate('2026-02-30')).toBeNull();
    expect(parseDate('2026-13-01')).toBeNull();
    expect(parseDate('2026-1-01')).toBeNull();
  });

  it('reads date-times without an offset as UTC and converts offsets', () => {
    expect(parseDateTime('2026-05-01T18:30:00')).toBe('2026-05-01T18:30:00');
    expect(parseDateTime('2026-05-01T18:30')).toBe('2026-05-01T18:30:00');
    expect(parseDateTime('2026-05-01T18:30:00Z')).toBe('2026-05-01T18:30:00');
    expect(parseDateTime('2026-05-01T18:30:00-05:00')).toBe('2026-05-01T23:30:00');
    expect(parseDateTime('2026-05-01T23:30:00+02:00')).toBe('2026-05-01T21:30:00');
    expect(parseDateTime('2026-02-30T10:00:00')).toBeNull();
    expect(parseDateTime('2026-05-01T24:00:00')).toBeNull();
    expect(parseDateTime('tomorrow')).toBeNull();
  });

  it('takes years before 100 as written (not as 19xx) and refuses an offset that leaves the four-digit years', () => {
    expect(parseDateTime('0050-01-01T00:00:00')).toBe('0050-01-01T00:00:00');
    expect(parseDateTime('0000-01-01T00:00:00-05:00')).toBe('0000-01-01T05:00:00');
    expect(parseDateTime('0000-01-01T00:00:00+05:00')).toBeNull();
    expect(parseDateTime('9999-12-31T23:00:00-05:00')).toBeNull();
    expect(parseDate('0004-02-29')).toBe('0004-02-29');
    expect(parseDate('0000-02-29')).toBe('0000-02-29');
    expect(parseDate('1900-02-29')).toBeNull();
  });

  it('stores times as 24-hour HH:MM', () => {
    expect(parseTime('18:00')).toBe('18:00');
    expect(parseTime('6:00 PM')).toBe('18:00');
    expect(parseTime('6 PM')).toBe('18:00');
    expect(parseTime('12:30 am')).toBe('00:30');
    expect(parseTime('12 PM')).toBe('12:00');
    expect(parseTime('9:05')).toBe('09:05');
    expect(parseTime('25:00')).toBeNull();
    expect(parseTime('13 PM')).toBeNull();
  });

  it('keeps phone digits, drops a leading 1 on 11 digits, and refuses the rest', () => {
    expect(parsePhone('(555) 867-5309')).toBe('5558675309');
    expect(parsePhone('1-555-867-5309')).toBe('5558675309');
    expect(parsePhone('2-555-867-5309')).toBeNull();
    expect(parsePhone('867-5309')).toBeNull();
    expect(parsePhone('555-867-5309 x12')).toBeNull();
  });

  it('maps state names and codes in any case, DC and territories included', () => {
    expect(stateCode('oh')).toBe('OH');
    expect(stateCode('New  Mexico')).toBe('NM');
    expect(stateCode('district of columbia')).toBe('DC');
    expect(stateCode('Puerto Rico')).toBe('PR');
    expect(stateCode('Ontario')).toBeNull();
  });

  it('validates email addresses', () => {
    expect(parseEmail('Ada@Example.org')).toBe('Ada@Example.org');
    // A top-level domain in its ASCII form (.рф is xn--p1ai) is a domain like any other.
    for (const good of ['user@example.xn--p1ai', 'user@xn--80ak6aa92e.XN--P1AI', 'a@b.museum']) expect(parseEmail(good), good).toBe(good);
    for (const bad of ['nope', 'a@b', 'a b@c.org', 'a@@c.org', '.a@c.org', 'a..b@c.org', 'a@-c.org', 'a@b.c1', 'a@b.xn--', 'a@b.xn--p1ai-', 'a@b.123']) expect(parseEmail(bad), bad).toBeNull();
  });
});

describe("an instant's text as the API shows it", () => {
  it('reads toISOString text to the second as a formatted Date would, and formats any other ISO text through a Date', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('0000-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), (d) => {
        expect(utcSecondsOf(d.toISOString())).toBe(formatDateTime(d));
      }),
    );
    expect(utcSecondsOf('2026-11-27T10:00:00+02:00')).toBe('2026-11-27T08:00:00');
    expect(utcSecondsOf('2026-11-27T10:00:00Z')).toBe('2026-11-27T10:00:00');
  });
});

describe('numbers without a stated bound', () => {
  it('keep whole numbers to 32 bits and amounts below a trillion', async () => {
    const { normaliseValue, INT_MAX } = await import('../../domain/shared/fields.js');
    expect(normaliseValue('Mileage', { kind: 'int', min: 0 }, INT_MAX)).toBe(INT_MAX);
    expect(() => normaliseValue('Mileage', { kind: 'int', min: 0 }, INT_MAX + 1)).toThrow(/Mileage must be at most/);
    expect(() => normaliseValue('Mileage', { kind: 'int', min: 0 }, 2 ** 53)).toThrow(/at most/);
    expect(normaliseValue('MileageAmount', { kind: 'number', min: 0 }, 999_999_999_999.99)).toBe(999_999_999_999.99);
    expect(() => normaliseValue('MileageAmount', { kind: 'number', min: 0 }, 1e300)).toThrow(/MileageAmount must be at most/);
  });
});

describe('string lengths', () => {
  const rule = { kind: 'string', max: 3 } as const;
  it('counts characters, not UTF-16 units: three emoji fit in three', () => {
    expect(normaliseValue('Title', rule, '😀😀😀')).toBe('😀😀😀');
    expect(normaliseValue('Title', rule, 'abc')).toBe('abc');
  });
  it('refuses one character more, naming the count', () => {
    expect(() => normaliseValue('Title', rule, '😀😀😀😀')).toThrow(/at most 3 characters \(got 4\)/);
    expect(() => normaliseValue('Title', rule, 'abcd')).toThrow(/at most 3 characters \(got 4\)/);
  });
});
