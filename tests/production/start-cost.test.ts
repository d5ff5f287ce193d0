import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useBuiltService } from '../support/process.js';

/**
 * decisions.md §13: a start is ready within 3 s, from the process's start. What a start spends
 * before it serves: the embedded default (no URLs) loads none of the production adapters' clients,
 * the tracing SDK (no OTEL_* set) or the mail library (no mail sent), and the process reports its
 * own time and CPU at ready.
 */
const service = useBuiltService('turnout-start-cost-');
const probe = path.resolve(import.meta.dirname, '../support/package-probe/register.mjs');

const NEVER_IN_THE_EMBEDDED_DEFAULT = [
  '@eventstore/db-client',
  'mongodb',
  '@nats-io/transport-node',
  '@nats-io/jetstream',
  '@nats-io/kv',
  '@opentelemetry/sdk-trace-base',
  '@opentelemetry/exporter-trace-otlp-http',
  'nodemailer',
];

describe('a start on the embedded stores', () => {
  it('loads no production adapter, tracing SDK or mail library, and says when it was ready and at what CPU', async () => {
    const proc = await service.start({ env: { TURNOUT_DATA_DIR: service.freshDir(), NODE_OPTIONS: `--import=${probe}` } });
    const line = /^ready (\d+) ms after the process started \(CPU (\d+) ms\)$/m;
    // Printed as /readyz turns 200; its pipe may deliver it a moment after the answer.
    await expect.poll(() => proc.output(), { timeout: 10_000 }).toMatch(line);
    const ready = line.exec(proc.output());
    const [ms, cpu] = [Number(ready![1]), Number(ready![2])];
    console.log(`an embedded start on an empty data dir: ready ${ms} ms after the process started, CPU ${cpu} ms`);
    // Both are the process's own figures; on a shared machine only a loose bound is safe.
    expect(ms).toBeGreaterThan(0);
    expect(cpu).toBeLessThan(30_000);
    await proc.stop();

    const loaded = new Set([...proc.output().matchAll(/^package-probe: (\S+)$/gm)].map((m) => m[1]));
    // The probe sees what the process imports: the HTTP framework and SQLite at least.
    expect(loaded).toContain('fastify');
    expect(loaded).toContain('better-sqlite3');
    expect(NEVER_IN_THE_EMBEDDED_DEFAULT.filter((p) => loaded.has(p))).toEqual([]);
  }, 60_000);
});
