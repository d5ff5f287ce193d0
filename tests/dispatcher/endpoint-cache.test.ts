import { describe, expect, it } from 'vitest';
import { EndpointCache } from '../../dispatcher/endpoint-cache.js';
import { webhookEndpointStream } from '../../domain/webhook-endpoint/events.js';
import { SqliteEventLog } from '../../eventlog/sqlite.js';
import { NO_STREAM } from '../../eventlog/port.js';

const metadata = { team: 1, source: 'Application' as const, keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' };
const created = { type: 'WebhookEndpointCreated', data: { id: 7, url: 'https://a.example/hook', events: ['*'], active: true, description: null, secret: 'whsec_one' }, metadata };

/** A log that counts how often a stream is read in full. */
function countingLog() {
  const log = new SqliteEventLog(':memory:');
  let reads = 0;
  const readStream = log.readStream.bind(log);
  log.readStream = (stream: string) => (reads++, readStream(stream));
  return { log, reads: () => reads };
}

describe('the worker’s endpoint cache', () => {
  it('reads the endpoint once while its stream is unchanged, and again as soon as it changes', async () => {
    const { log, reads } = countingLog();
    try {
      await log.append(webhookEndpointStream(7), [created], NO_STREAM);
      const cache = new EndpointCache(log);
      expect((await cache.current(7)).url).toBe('https://a.example/hook');
      expect((await cache.current(7)).secrets.map((s) => s.secret)).toEqual(['whsec_one']);
      expect(reads()).toBe(1);

      await log.append(webhookEndpointStream(7), [{ type: 'WebhookEndpointUpdated', data: { id: 7, changes: { url: 'https://b.example/hook' } }, metadata }], 0n);
      await log.append(webhookEndpointStream(7), [{ type: 'WebhookEndpointSecretRotated', data: { id: 7, secret: 'whsec_two', previousExpiresAt: null }, metadata }], 1n);
      const now = await cache.current(7);
      expect(now.url).toBe('https://b.example/hook');
      expect(now.secrets.map((s) => s.secret)).toEqual(['whsec_two']);
      expect(reads()).toBe(2);

      await log.append(webhookEndpointStream(7), [{ type: 'WebhookEndpointDisabled', data: { id: 7, reason: 'gone' }, metadata }], 2n);
      expect((await cache.current(7)).active).toBe(false);
      expect((await cache.current(8)).exists).toBe(false);
    } finally {
      await log.close();
    }
  });

  it('notes where in the log the endpoint was last made active: created so, or enabled again after a disable', async () => {
    const log = new SqliteEventLog(':memory:');
    try {
      const stream = webhookEndpointStream(7);
      const made = await log.append(stream, [created], NO_STREAM);
      const cache = new EndpointCache(log);
      expect((await cache.current(7)).activeFrom).toBe(made.position.prepare);
      await log.append(stream, [{ type: 'WebhookEndpointUpdated', data: { id: 7, changes: { description: 'other fields' } }, metadata }], 0n);
      expect((await cache.current(7)).activeFrom).toBe(made.position.prepare);
      await log.append(stream, [{ type: 'WebhookEndpointDisabled', data: { id: 7, reason: 'failing' }, metadata }], 1n);
      const enabled = await log.append(stream, [{ type: 'WebhookEndpointUpdated', data: { id: 7, changes: { active: true } }, metadata }], 2n);
      expect(await cache.current(7)).toMatchObject({ active: true, activeFrom: enabled.position.prepare });
      expect(enabled.position.prepare).toBeGreaterThan(made.position.prepare);
    } finally {
      await log.close();
    }
  });
});
