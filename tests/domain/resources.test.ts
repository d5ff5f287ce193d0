import { describe, expect, it } from 'vitest';
import { CATEGORIES } from '../../domain/events.js';
import { RESOURCES, type Resource } from '../../domain/resources.js';
import { WEBHOOK_TYPES } from '../../domain/webhook-endpoint/types.js';

const entries: Resource[] = Object.values(RESOURCES);

describe('the resource registry', () => {
  it('names each resource once: path, category, read key and webhook resource name', () => {
    for (const field of ['path', 'category', 'key', 'resource'] as const) {
      const values = entries.map((r) => r[field]);
      expect(new Set(values).size, field).toBe(values.length);
    }
    for (const r of entries) expect(CATEGORIES).toContain(r.category);
  });

  it('locks and deletes only what the admin surface knows', () => {
    for (const r of entries) if (r.lockable || r.deletable) expect(r.admin, r.path).toBe(true);
  });

  it('covers every webhook type by the prefix of a resource that fires it, and each prefix fires some type', () => {
    const prefixes = new Set(entries.flatMap((r) => (r.fires ? [r.fires] : [])));
    for (const t of WEBHOOK_TYPES) expect([...prefixes].some((p) => t.startsWith(p)), t).toBe(true);
    for (const p of prefixes) expect(WEBHOOK_TYPES.some((t) => t.startsWith(p)), p).toBe(true);
  });
});
