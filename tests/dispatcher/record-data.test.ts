import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { recordData, utc } from '../../dispatcher/payloads.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { Values } from '../../domain/shared/fields.js';
import type { RecordState } from '../../domain/shared/record.js';

/**
 * A payload's data is signed and kept in the change feed as its JSON text, so its keys' order is
 * part of the bytes (decisions.md §7: the feed lists what the webhook sent, byte for byte). The
 * reference below is the data built key by key: the id, FkTeam, every listed field (null when
 * unset), the extra fields, DateCreated, then the stamp's date.
 */
function reference(idField: string, s: RecordState, fields: readonly string[], event: RecordedEvent, stamp: 'created' | 'updated' | 'deleted', extra: Values): Values {
  const out: Values = { [idField]: s.id, FkTeam: s.team };
  for (const f of fields) out[f] = s.fields[f] ?? null;
  Object.assign(out, extra, { DateCreated: utc(s.createdAt) });
  if (stamp === 'updated') out.DateLastModified = utc(event.metadata.at);
  if (stamp === 'deleted') out.DeletedUtc = utc(event.metadata.at);
  return out;
}

const name = fc.constantFrom('FirstName', 'LastName', 'Email1', 'Nickname', 'FkTeam', 'PkThing', 'Notes', 'IsActive', 'A', 'b_2');
const value = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null));
const at = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2090-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString());

describe('webhook data of a record', () => {
  it('holds the same keys in the same order with the same values as the data built key by key', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(name, { maxLength: 10 }),
        fc.dictionary(name, value, { maxKeys: 6 }),
        fc.dictionary(fc.constantFrom('Linked', 'Email1', 'Hours'), value, { maxKeys: 3 }),
        fc.constantFrom('created' as const, 'updated' as const, 'deleted' as const),
        at,
        at,
        (fields, values, extra, stamp, createdAt, changedAt) => {
          // A fresh list each run: the data is compiled once per list, and this checks each compilation.
          const list = [...fields];
          const s: RecordState = { exists: true, deleted: false, id: 41, team: 7, fields: values, locked: false, createdAt, modifiedAt: changedAt };
          const event = { metadata: { at: changedAt } } as unknown as RecordedEvent;
          const expected = JSON.stringify(reference('PkThing', s, list, event, stamp, extra));
          expect(JSON.stringify(recordData('PkThing', s, list, event, stamp, extra))).toBe(expected);
          // A second build from the same list, as every later change of the type is.
          expect(JSON.stringify(recordData('PkThing', s, list, event, stamp, extra))).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives each data an object of its own', () => {
    const s: RecordState = { exists: true, deleted: false, id: 1, team: 2, fields: { FirstName: 'Ada' }, locked: false, createdAt: '2026-01-01T00:00:00.000Z', modifiedAt: null };
    const event = { metadata: { at: '2026-01-02T00:00:00.000Z' } } as unknown as RecordedEvent;
    const list = ['FirstName'];
    const a = recordData('PkConstituent', s, list, event, 'created');
    a.FirstName = 'changed';
    expect(recordData('PkConstituent', s, list, event, 'created').FirstName).toBe('Ada');
  });
});
