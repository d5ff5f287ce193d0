import { describe, expect, it, vi } from 'vitest';
import type { CollectionDef, Doc, JsonShape } from '../../projections/store/port.js';
import { SqliteReadStore } from '../../projections/store/sqlite.js';

/**
 * ReadStore.getJson on SQLite writes a document's fields from the row as stored (storedDoc leaves
 * out nulls of declared fields and what the columns hold, and keys declared fields by place):
 * it must give exactly what get() reads, in the shape's order, as JSON.stringify writes each value.
 */
const expected = (doc: Doc, shape: JsonShape) => ({
  json: `{${shape.fields.map((f) => `${JSON.stringify(f)}:${JSON.stringify(doc[f] ?? null)}`).join(',')}}`,
  picked: shape.pick.map((f) => doc[f] ?? null),
});

const DOCS: Doc[] = [
  { id: 1, team: 7, name: 'Ada', email: 'a@x.org', active: true, score: 3.5, tags: ['x', 'y'], note: null, _rev: 2 },
  // Nested values holding the scan's delimiters, and strings ending in backslashes.
  { id: 5, team: 7, name: 'ends \\', email: '\\"', tags: ['a}b', '"[', { k: '\\', 'x,y': [1, { z: '}' }] }], note: '\\\\', score: 1e21, _rev: 1e-7 },
  { id: 2, team: 7, name: null, email: null, active: false, score: -0, tags: null, note: 'line\n"two"\\', extra: { a: 1 }, _rev: 1 },
  // A column field holding what its column cannot keep as it is (a boolean, an object): the JSON keeps it.
  { id: 3, team: true, name: '', email: 'Ünïcødé 🎉', active: null, score: 0, tags: [], note: 'lone \ud800 surrogate', _rev: 9 },
  { id: 'text-key', team: 'seven', name: 'x'.repeat(5000) },
];

const COLLECTIONS: Array<{ def: CollectionDef; label: string }> = [
  { label: 'declared fields (stored by place)', def: { name: 'declared', idField: 'id', indexes: [['team'], ['team', 'email']], fields: ['name', 'email', 'active', 'score', 'tags', 'note', '_rev'] } },
  { label: 'no declared fields (stored by name)', def: { name: 'plain', idField: 'id', indexes: [['team']] } },
];

describe('SqliteReadStore.getJson', () => {
  for (const { label, def } of COLLECTIONS) {
    it(`writes what get() reads, in the shape's order: ${label}`, async () => {
      const store = new SqliteReadStore(':memory:');
      try {
        await store.defineCollection(def);
        for (const doc of DOCS) await store.put(def.name, doc);
        const shapes: JsonShape[] = [
          { fields: ['id', 'team', 'name', 'email', 'active', 'score', 'tags', 'note', 'extra', 'missing'], pick: ['team', '_rev'] },
          { fields: ['note', 'id'], pick: [] },
          { fields: [], pick: ['email'] },
        ];
        for (const shape of shapes)
          for (const doc of DOCS) {
            const read = (await store.get<Doc>(def.name, doc.id as number))!;
            expect(store.getJson(def.name, doc.id as number, shape), `${String(doc.id)} ${shape.fields.join()}`).toEqual(expected(read, shape));
            // And what was put, where the store gives it back as it was.
            expect(JSON.parse(store.getJson(def.name, doc.id as number, shape)!.json)).toEqual(JSON.parse(expected(doc, shape).json));
          }
        expect(store.getJson(def.name, 404, shapes[0])).toBeNull();
        // A stored text not as JSON.stringify writes it (white space) is parsed instead of scanned.
        const before = DOCS.map((d) => store.getJson(def.name, d.id as number, shapes[0]));
        store.core.db.prepare(`UPDATE "${def.name}" SET doc = json_pretty(doc)`).run();
        expect(DOCS.map((d) => store.getJson(def.name, d.id as number, shapes[0]))).toEqual(before);
      } finally {
        await store.close();
      }
    });
  }

  it('copies declared fields from the stored text without parsing it, delimiters and escapes inside strings and nested values included', async () => {
    const store = new SqliteReadStore(':memory:');
    try {
      const def = COLLECTIONS[0].def;
      await store.defineCollection(def);
      for (const doc of DOCS) await store.put(def.name, doc);
      const shape: JsonShape = { fields: ['name', 'email', 'tags', 'note', 'score', 'id'], pick: [] };
      const wanted = [1, 5].map((id) => store.getJson(def.name, id, shape));
      const parse = vi.spyOn(JSON, 'parse');
      try {
        expect([1, 5].map((id) => store.getJson(def.name, id, shape))).toEqual(wanted);
        expect(parse).not.toHaveBeenCalled();
      } finally {
        parse.mockRestore();
      }
      expect(JSON.parse(wanted[1]!.json)).toEqual({ name: 'ends \\', email: '\\"', tags: DOCS[1].tags, note: '\\\\', score: 1e21, id: 5 });
    } finally {
      await store.close();
    }
  });
});
