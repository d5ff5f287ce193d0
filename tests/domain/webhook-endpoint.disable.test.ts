import { describe, expect, it } from 'vitest';
import { decideDisableEndpoint, decideUpdateEndpoint } from '../../domain/webhook-endpoint/decide.js';
import { endpointEvolver, type EndpointEvent } from '../../domain/webhook-endpoint/events.js';
import { given, TEAM } from '../support/decider.js';

const created: EndpointEvent = {
  type: 'WebhookEndpointCreated',
  data: { id: 7, url: 'https://hooks.example.org/x', events: ['*'], active: true, description: null, secret: 'whsec_x' },
};
const disabled: EndpointEvent = { type: 'WebhookEndpointDisabled', data: { id: 7, reason: 'gone' } };

describe('auto-disabling an endpoint (decisions.md 12)', () => {
  it('disables an active endpoint with its reason, and records when', () => {
    given(endpointEvolver, [created]).when((s) => decideDisableEndpoint({ id: 7, team: TEAM, reason: 'failing' }, s)).then([
      { type: 'WebhookEndpointDisabled', data: { id: 7, reason: 'failing' } },
    ]);
    const s = given(endpointEvolver, [created, disabled]).state;
    expect(s).toMatchObject({ active: false, disabledReason: 'gone', disabledAt: expect.any(String) });
  });

  it('records nothing for an endpoint already inactive, deleted or of another team', () => {
    given(endpointEvolver, [created, disabled]).when((s) => decideDisableEndpoint({ id: 7, team: TEAM, reason: 'failing' }, s)).then([]);
    given(endpointEvolver, [created, { type: 'WebhookEndpointDeleted', data: { id: 7 } }]).when((s) => decideDisableEndpoint({ id: 7, team: TEAM, reason: 'gone' }, s)).then([]);
    given(endpointEvolver, [created]).when((s) => decideDisableEndpoint({ id: 7, team: TEAM + 1, reason: 'gone' }, s)).then([]);
  });

  it('clears disabledAt and disabledReason when re-enabled, and counts failures from then', () => {
    const g = given(endpointEvolver, [created, disabled]);
    let events: EndpointEvent[] = [];
    g.when((s) => (events = decideUpdateEndpoint({ id: 7, team: TEAM, input: { active: true } }, s))).then([
      { type: 'WebhookEndpointUpdated', data: { id: 7, changes: { active: true } } },
    ]);
    const s = events.map((e) => ({ ...e, metadata: { team: TEAM, at: '2026-11-02T00:00:00.000Z' } })).reduce(endpointEvolver.evolve, g.state);
    expect(s).toMatchObject({ active: true, disabledAt: null, disabledReason: null, activeSince: '2026-11-02T00:00:00.000Z' });
  });
});
