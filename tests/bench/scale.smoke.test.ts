import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { measureScale as MeasureScale, measureStartOnly as MeasureStartOnly } from '../../bench/scale.js';
import { type Build, buildService } from '../support/process.js';

let build: Build | null = null;
const kept = mkdtempSync(path.join(tmpdir(), 'turnout-scale-smoke-'));
afterAll(() => {
  build?.remove();
  rmSync(kept, { recursive: true, force: true });
});

describe('the scale benchmark (bench/scale.ts), as a smoke at a tiny size', () => {
  it('writes through the real server, restarts it and prints every figure beside its target', async () => {
    build = await buildService();
    // The compiled benchmark: its load generator runs in a worker thread, from a compiled file.
    const compiled = pathToFileURL(path.join(path.dirname(build.server), '..', 'bench', 'scale.js')).href;
    const { measureScale, measureStartOnly } = (await import(compiled)) as { measureScale: typeof MeasureScale; measureStartOnly: typeof MeasureStartOnly };
    const lines = await measureScale({ n: 200, server: build.server, searches3: 20, searches12: 10, lookups: 20, note: () => undefined, keepDir: kept });
    const text = lines.join('\n');
    expect(lines[0]).toMatch(/^200 constituents \(POST [\d,]+\/s\) and 20 updates/);
    for (const figure of [
      'data dir as the server left it',
      'start to /healthz 200',
      'start to /readyz 200',
      'peak RSS during start',
      'peak RSS after 31 searches',
      'first search after start',
      'search, 3 characters from names, p99 (20)',
      'search, 1-2 characters, p99 (10)',
      'email look-up, p99 (20)',
      'read by id, p99 (20)',
      'rebuild of every read model from the log',
      'rebuild against reading the log alone',
    ])
      expect(text).toMatch(new RegExp(`^  ${figure.replace(/[()/]/g, '\\$&')}.*  (met|MISSED|-)$`, 'm'));
    expect(text).toContain('baseline: GET /healthz');
    expect(text).toMatch(/baseline: the log read and parsed alone, before and after the rebuild: [\d,]+ events\/s, [\d,]+ events\/s/);
    // Each thread's CPU time beside the read's: the ratio two free cores would give, whatever the load.
    expect(text).toMatch(/the rebuild's threads: here [\d.]+ s CPU in [\d.]+ s, apart [\d.]+ s CPU in [\d.]+ s, search [\d.]+ s CPU in [\d.]+ s; the read alone [\d.]+ s CPU, so on two free cores about [\d.]+x/);
    expect(text).toMatch(/data dir as the server left it: [\d.,]+ MB/);
    expect(text).toMatch(/data dir after the rebuild: [\d.,]+ MB/);

    // BENCH_PART=start: the start alone, on the data dir the run kept, through a new key of its team.
    const start = (await measureStartOnly(build.server, kept)).join('\n');
    for (const figure of ['data dir as the server left it', 'start to /readyz 200', 'email look-up, p99 (300)', 'read by id, p99 (300)'])
      expect(start).toMatch(new RegExp(`^  ${figure.replace(/[()/]/g, '\\$&')}.*  (met|MISSED|-)$`, 'm'));
    expect(start).toMatch(/data dir as the server left it +[\d.,]+ MB +<= 0\.3 MB/);
  }, 180_000);
});
