import { describe, expect, it } from 'vitest';
import type { EventsByCategory } from '../../domain/events.js';
import type { RecordedEvent } from '../../domain/shared/events.js';
import type { LoggedEvent } from '../../domain/events.js';
import type { Projector } from '../../projections/engine/projector.js';
import { ProjectionStep } from '../../projections/engine/step.js';
import { projectors } from '../../projections/index.js';
import type { ReadStore } from '../../projections/store/port.js';
import { MemoryReadStore } from '../support/memory-store/memory.js';

const recorded = (n: number, stream: string, type: string): RecordedEvent => ({
  stream,
  type,
  revision: 0n,
  position: { commit: BigInt(n), prepare: BigInt(n) },
  data: {},
  metadata: { team: 1, source: 'Application', keyName: null, correlationId: 'c', at: '2024-05-01T12:00:00.000Z' },
});

/** Every type of the categories a product projector lists types for: the compiler checks none is missing. */
const TYPES: { [K in 'constituent' | 'event' | 'webhook_endpoint']: Record<EventsByCategory[K]['type'], true> } = {
  constituent: { ConstituentCreated: true, ConstituentUpdated: true, ConstituentLocked: true, ConstituentUnlocked: true, ConstituentDeleted: true, ConstituentErased: true },
  event: { EventCreated: true, EventUpdated: true, EventLocked: true, EventUnlocked: true, EventDeleted: true, EventNotificationTemplatesSeeded: true, EventPublicFormDefaultsApplied: true },
  webhook_endpoint: {
    WebhookEndpointCreated: true,
    WebhookEndpointUpdated: true,
    WebhookEndpointSecretRotated: true,
    WebhookEndpointDisabled: true,
    WebhookEndpointDeleted: true,
  },
};

/** A store any use of which fails the test: what a projector does nothing with never reaches it. */
const untouchable = new Proxy({} as ReadStore, {
  get: (_, name) => {
    throw new Error(`the store's ${String(name)} was used`);
  },
});

describe('event types a projector reads', () => {
  it('gives a projector of a category only the types it lists there, and every type of its other categories', async () => {
    const seen: string[] = [];
    const following: Projector = {
      name: 'following',
      version: 1,
      collections: [],
      categories: ['volunteer', 'constituent'],
      eventTypes: { constituent: ['ConstituentUpdated'] },
      apply: async (e) => void seen.push(e.type),
    };
    const all: string[] = [];
    const everything: Projector = { name: 'everything', version: 1, collections: [], apply: async (e) => void all.push(e.type) };
    const step = new ProjectionStep([following, everything]);
    const store = new MemoryReadStore();
    await step.load(store);
    const events = [
      recorded(1, 'constituent-1', 'ConstituentCreated'),
      recorded(2, 'constituent-1', 'ConstituentUpdated'),
      recorded(3, 'volunteer-2', 'VolunteerCreated'),
      recorded(4, 'constituent-3', 'ConstituentCreated'),
      recorded(5, 'constituent-3', 'ConstituentUpdated'),
    ];
    await step.apply(events, store);
    expect(seen).toEqual(['ConstituentUpdated', 'VolunteerCreated', 'ConstituentUpdated']);
    expect(all).toEqual(events.map((e) => e.type));
  });

  it('lists, for each product projector, every type its apply acts on: the ones left out change nothing', async () => {
    const typed = projectors.filter((p) => p.eventTypes);
    expect(typed.map((p) => p.name).sort()).toEqual(['eventTickets', 'notifications', 'volunteerTasks', 'volunteers'].sort());
    let checked = 0;
    for (const p of typed) {
      for (const [category, listed] of Object.entries(p.eventTypes!) as Array<[keyof typeof TYPES, readonly string[]]>) {
        const types = Object.keys(TYPES[category]);
        for (const type of listed) expect(types, `${p.name}: ${type}`).toContain(type);
        for (const type of types.filter((t) => !listed.includes(t))) {
          const event = recorded(7, `${category}-7`, type) as unknown as LoggedEvent;
          await expect(p.apply(event, untouchable), `${p.name}: ${type}`).resolves.toBeUndefined();
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
  });
});
