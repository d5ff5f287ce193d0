/**
 * Value rules shared by every resource (decisions.md 3): calendar-valid dates, UTC date-times,
 * 24-hour times, US phones, emails. Each returns the normalised value or null when invalid.
 */

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear takes the year as given. */
function utcMs(y: number, monthIndex: number, d: number, h = 0, mi = 0, s = 0): number {
  const t = new Date(0);
  t.setUTCFullYear(y, monthIndex, d);
  t.setUTCHours(h, mi, s, 0);
  return t.getTime();
}

function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = new Date(utcMs(y, m, 0)).getUTCDate();
  return d <= days;
}

/** `YYYY-MM-DD`, valid on the calendar (2026-02-30 is not). */
export function parseDate(input: string): string | null {
  const m = DATE.exec(input);
  if (!m) return null;
  return validDate(+m[1], +m[2], +m[3]) ? input : null;
}

/**
 * An ISO date-time; without an offset it is UTC. Stored as `YYYY-MM-DDTHH:MM:SS` in UTC, the
 * form the spec shows, so a value sent without an offset reads back exactly as sent.
 */
export function parseDateTime(input: string): string | null {
  const m = DATE_TIME.exec(input);
  if (!m) return null;
  const [, y, mo, d, h, mi, s = '00', , off] = m;
  if (!validDate(+y, +mo, +d) || +h > 23 || +mi > 59 || +s > 59) return null;
  let ms = utcMs(+y, +mo - 1, +d, +h, +mi, +s);
  if (off && off.toUpperCase() !== 'Z') {
    const sign = off[0] === '-' ? -1 : 1;
    const digits = off.slice(1).replace(':', '');
    const oh = +digits.slice(0, 2);
    const om = +digits.slice(2, 4);
    if (oh > 23 || om > 59) return null;
    ms -= sign * (oh * 60 + om) * 60_000;
  }
  const utc = new Date(ms);
  // An offset can carry year 0000 or 9999 out of the four-digit form.
  if (utc.getUTCFullYear() < 0 || utc.getUTCFullYear() > 9999) return null;
  return formatDateTime(utc);
}

export function formatDateTime(d: Date): string {
  return d.toISOString().slice(0, 19);
}

/** The form Date#toISOString writes (events' metadata keep their time so). */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * An instant's ISO text as the API shows date-times (UTC, to the second): read off the text when
 * it is in toISOString's form, which every event's time is, without a Date made and formatted
 * (a rebuild formats two per event).
 */
export const utcSecondsOf = (iso: string): string => (ISO_INSTANT.test(iso) ? iso.slice(0, 19) : formatDateTime(new Date(iso)));

export function dateTimeMs(value: string): number {
  return Date.parse(value + 'Z');
}

const TIME_24 = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;
const TIME_12 = /^(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s*m\.?$/i;

/** `18:00`, `6:00 PM`, `6 PM`, `6pm` → `HH:MM` 24-hour. */
export function parseTime(input: string): string | null {
  const s = input.trim();
  let h: number;
  let m: number;
  const t24 = TIME_24.exec(s);
  const t12 = TIME_12.exec(s);
  if (t24) {
    h = +t24[1];
    m = +t24[2];
    if (h > 23 || m > 59 || (t24[3] !== undefined && +t24[3] > 59)) return null;
  } else if (t12) {
    h = +t12[1];
    m = t12[2] === undefined ? 0 : +t12[2];
    if (h < 1 || h > 12 || m > 59) return null;
    const pm = t12[3].toLowerCase() === 'p';
    h = (h % 12) + (pm ? 12 : 0);
  } else return null;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
}

/** Digits only; a leading 1 on 11 digits is dropped; anything but 10 digits is invalid. */
export function parsePhone(input: string): string | null {
  let digits = input.replace(/\D/g, '');
  if (digits.length === 11 && digits.startsWith('1')) digits = digits.slice(1);
  if (digits.length !== 10) return null;
  // Besides digits, only the punctuation people type around a number.
  if (/[^\d\s().+\-/]/.test(input)) return null;
  return digits;
}

// Pragmatic address rule (RFC 5321 lengths, a dotted domain, no spaces or control characters).
// The top-level label is letters, or an internationalised one in its ASCII form (`xn--p1ai`, .рф).
const EMAIL = /^[^\s@"(),:;<>[\]\\]+@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:[a-z]{2,63}|xn--[a-z0-9](?:[a-z0-9-]{0,57}[a-z0-9])?)$/i;

/** Emails keep their case (they match case-insensitively everywhere, see emailKey). */
export function parseEmail(input: string): string | null {
  const s = input.trim();
  if (s.length > 254 || !EMAIL.test(s)) return null;
  const local = s.slice(0, s.lastIndexOf('@'));
  if (local.length > 64 || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return null;
  return s;
}

export const emailKey = (email: string) => email.trim().toLowerCase();

export function todayUtc(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** A date-time's fraction of a second, with the separators DATE_TIME takes (`T`, `t` or a space). */
const FRACTION = /^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2})\.(\d{1,9})(.*)$/;

/**
 * An instant (`asOf`, a range's `from`/`to`) in milliseconds: an ISO date-time as parseDateTime
 * reads it (UTC without an offset), which may also carry a fraction of a second, so the `at` of a
 * history entry reads back as the very instant of that write. Null when it is not one.
 */
export function parseInstant(input: string): number | null {
  const m = FRACTION.exec(input);
  const whole = parseDateTime(m ? m[1] + m[3] : input);
  if (!whole) return null;
  return dateTimeMs(whole) + (m ? Math.floor(Number(`0.${m[2]}`) * 1000) : 0);
}
