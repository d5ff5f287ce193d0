import { describe, expect, it } from 'vitest';
import { testConfig } from '../../runtime/config.js';
import { readModelTopology } from '../../runtime/topology.js';

describe('where a process keeps its read models, by configuration', () => {
  it('keeps them in the data dir, on a thread of their own, when the log is the embedded file', () => {
    expect(readModelTopology(testConfig({ dataDir: '/var/lib/turnout' }))).toBe('file-thread');
  });

  it('keeps them in memory, on the main thread, for an in-memory data dir or EventStoreDB without MongoDB', () => {
    expect(readModelTopology(testConfig({ dataDir: ':memory:' }))).toBe('in-process');
    expect(readModelTopology(testConfig({ dataDir: '/var/lib/turnout', eventStoreUrl: 'esdb://localhost:2113?tls=false' }))).toBe('in-process');
    expect(readModelTopology(testConfig({ eventStoreUrl: 'esdb://localhost:2113?tls=false', role: 'api' }))).toBe('in-process');
  });

  it('writes a shared MongoDB store under the lease in the roles that project, and only reads it in the others', () => {
    const mongo = { mongoUrl: 'mongodb://localhost:27017/turnout', eventStoreUrl: 'esdb://localhost:2113?tls=false' };
    expect(readModelTopology(testConfig({ ...mongo, role: 'all' }))).toBe('leased');
    expect(readModelTopology(testConfig({ ...mongo, role: 'projector' }))).toBe('leased');
    expect(readModelTopology(testConfig({ ...mongo, role: 'api' }))).toBe('reader');
    expect(readModelTopology(testConfig({ ...mongo, role: 'dispatcher' }))).toBe('reader');
  });
});
