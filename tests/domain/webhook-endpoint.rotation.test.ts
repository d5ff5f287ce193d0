import { describe, expect, it } from 'vitest';
import { endpointEvolver, type EndpointEvent, signingSecrets } from '../../domain/webhook-endpoint/events.js';
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
  g.when((s) => decideRotateSecret({ id: 7, team: TEAM, secret, expiresInSeconds, now: NOW }, s)).then((e) => {
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
