import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { measureImport as MeasureImport } from '../../bench/import.js';
import { type Build, buildService } from '../support/process.js';

let build: Build | null = null;
afterAll(() => build?.remove());

describe('the import benchmark (bench/import.ts), as a smoke at a tiny size', () => {
  it('imports through the built CLI into a bare baseline and into the product, and prints both beside the target', async () => {
    build = await buildService();
    // The compiled benchmark: it runs the compiled CLI beside it (cli/main.js).
    const compiled = pathToFileURL(path.join(path.dirname(build.server), '..', 'bench', 'import.js')).href;
    const { measureImport } = (await import(compiled)) as { measureImport: typeof MeasureImport };
    const lines = await measureImport(300, 300);
    expect(lines[0]).toBe('turnout import of 300 constituents (CSV, 8 columns), the built CLI against the embedded server in this process');
    expect(lines[1]).toMatch(/^ {2}[\d.]+ s, [\d,]+ rows\/s {3}target: 100,000 rows in < 30 s \(3,333 rows\/s\) {3}(met|MISSED)$/);
    expect(lines[2]).toBe('  300 valid, 0 invalid; 300 written, 0 failed');
    expect(lines[3]).toMatch(/^ {2}baseline: the same CLI and file against a bare Fastify route that stores nothing: [\d.]+ s, [\d,]+ rows\/s \(ours [\d.]+x\)$/);
    expect(lines[4]).toMatch(/^ {2}single POST \/api\/v1\/constituents on the same server, 64 connections, before and after the import: [\d,]+ req\/s \(p99 [\d.]+ ms\), [\d,]+ req\/s \(p99 [\d.]+ ms\)$/);
    expect(lines[5]).toMatch(/^ {2}import against single POST: [\d.]+x \(rows\/s against the mean req\/s\) {3}target: >= 2x {3}(met|MISSED)$/);
  }, 120_000);
});
