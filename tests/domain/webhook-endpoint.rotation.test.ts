import { describe, expect, it } from 'vitest';
import { endpointEvolver, type EndpointEvent, liveSecrets, nextSecretGeneration, secretBinding, signingSecrets } from '../../domain/webhook-endpoint/events.js';
import { decideRotateSecret } from '../../domain/webhook-endpoint/decide.js';
import { given, TEAM } from '../support/decider.js';

const NOW = new Date('2026-11-01T12:00:00.000Z');
const created: EndpointEvent = {
  type: 'WebhookEndpointCreated',
  data: { id: 7, url: 'https://example.org/hook', events: ['*'], active: true, description: null, secret: 'whsec_first' },
};

/** The endpoint after `events`, then rotated to `secret` with `expiresInSeconds`: the secrets that sign at NOW. */
function rotate(events: EndpointEvent[], secret: string, expiresInSeconds?: number): string[] {
  const g = given(endpointEvolver, events);
  let rotated: EndpointEvent[] = [];
  g.when((s) => decideRotateSecret({ id: 7, team: TEAM, secret, generation: nextSecretGeneration(s), expiresInSeconds, now: NOW }, s)).then((e) => {
    rotated = e as EndpointEvent[];
  });
  return signingSecrets(given(endpointEvolver, [...events, ...rotated]).state, NOW);
}

describe('rotating a signing secret (decisions.md 12)', () => {
  it('keeps the previous secret signing for expiresInSeconds, the new one first', () =>
    expect(rotate([created], 'whsec_second', 600)).toEqual(['whsec_second', 'whsec_first']));

  it('retires the previous secret at once with expiresInSeconds 0 (the default)', () => {
    expect(rotate([created], 'whsec_second', 0)).toEqual(['whsec_second']);
    expect(rotate([created], 'whsec_second')).toEqual(['whsec_second']);
  });

  it('retires every older secret at once with expiresInSeconds 0, including one still inside an earlier overlap', () => {
    const overlap: EndpointEvent = {
      type: 'WebhookEndpointSecretRotated',
      data: { id: 7, secret: 'whsec_second', previousExpiresAt: new Date(NOW.getTime() + 600_000).toISOString() },
    };
    expect(rotate([created, overlap], 'whsec_third', 0)).toEqual(['whsec_third']);
  });

  it('keeps an older secret inside its own overlap when the new rotation overlaps too', () => {
    const overlap: EndpointEvent = {
      type: 'WebhookEndpointSecretRotated',
      data: { id: 7, secret: 'whsec_second', previousExpiresAt: new Date(NOW.getTime() + 600_000).toISOString() },
    };
    expect(rotate([created, overlap], 'whsec_third', 60)).toEqual(['whsec_third', 'whsec_second', 'whsec_first']);
  });
});

describe('the generations of a signing secret (what a sealed secret is bound to, decisions.md §17)', () => {
  it('counts from 1 at the create, one more per rotation, and each secret keeps its own through an overlap', () => {
    const state = (events: EndpointEvent[]) => given(endpointEvolver, events).state;
    let events: EndpointEvent[] = [created];
    for (const [secret, overlap] of [['whsec_second', 600], ['whsec_third', 60]] as const) {
      const s = state(events);
      events = [...events, ...decideRotateSecret({ id: 7, team: TEAM, secret, generation: nextSecretGeneration(s), expiresInSeconds: overlap, now: NOW }, s)];
    }
    expect(liveSecrets(state(events), NOW).map((x) => [x.secret, x.generation])).toEqual([
      ['whsec_third', 3],
      ['whsec_second', 2],
      ['whsec_first', 1],
    ]);
  });

  it('counts a rotation written before generations were recorded as the one after the previous', () => {
    const old: EndpointEvent = { type: 'WebhookEndpointSecretRotated', data: { id: 7, secret: 'whsec_old', previousExpiresAt: null } };
    const s = given(endpointEvolver, [created, old]).state;
    expect(s.secrets).toEqual([{ secret: 'whsec_old', expiresAt: null, generation: 2 }]);
    expect(nextSecretGeneration(s)).toBe(3);
  });

  it('binds a secret to its endpoint and generation', () => {
    expect(new Set([secretBinding(7, 1), secretBinding(7, 2), secretBinding(8, 1)]).size).toBe(3);
  });
});
