/**
 * Whether JSON.parse(JSON.stringify(value)) gives `value` back as it is: deep-equal, with its keys
 * in the same order (for a plain object both list integer keys first, then the others as inserted,
 * which is the order JSON.stringify writes them). False where JSON writes something else: undefined
 * (dropped, or null in an array, as is a hole), NaN and the infinities (null), -0 (0), a bigint, a
 * function or a symbol, and any object that is not a plain object or array (a Date's toJSON, a
 * class instance's prototype, a null prototype all come back as plain objects or strings).
 *
 * It trusts what NewEvent (port.ts) asks of an event's data: no getters, symbol keys,
 * non-enumerable properties (a hidden toJSON) or proxies, which it would not see and JSON would
 * (looking for them would cost each append an array of its keys per object).
 *
 * A log that has the appended object in hand gives it to its followers where this holds, instead
 * of parsing back the text it just wrote (sqlite-group-commit.ts); sealed-data.ts applies the same
 * rule to the sealed parts.
 */
export function jsonGivesBack(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null) return true;
      const proto: unknown = Object.getPrototypeOf(value);
      if (proto === Array.prototype) {
        const list = value as unknown[];
        for (let i = 0; i < list.length; i++) if (!jsonGivesBack(list[i])) return false;
        return true;
      }
      if (proto !== Object.prototype) return false;
      const record = value as Record<string, unknown>;
      for (const key in record) if (!jsonGivesBack(record[key])) return false;
      return true;
    }
    default:
      return false;
  }
}
