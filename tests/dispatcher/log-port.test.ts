import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const EVENTLOG = path.join(ROOT, 'eventlog');
/** What of eventlog/ the dispatcher may use: the port, and load() written against it. */
const PORT = ['port.ts', 'load.ts'].map((f) => path.join(EVENTLOG, f));

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sources(path.join(dir, d.name)) : /\.[jt]s$/.test(d.name) ? [path.join(dir, d.name)] : []));
}

describe('the dispatcher and the event log', () => {
  it('reads the log through its port only: no file under dispatcher/ imports an event-log adapter', () => {
    const imports = sources(path.join(ROOT, 'dispatcher')).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((m) => ({
        file: path.relative(ROOT, file),
        target: path.resolve(path.dirname(file), m[1]).replace(/\.js$/, '.ts'),
      })),
    );
    expect(imports.length).toBeGreaterThan(0);
    const adapters = imports.filter((i) => i.target.startsWith(EVENTLOG + path.sep) && !PORT.includes(i.target));
    expect(adapters.map((i) => `${i.file} imports ${path.relative(ROOT, i.target)}`)).toEqual([]);
  });
});
