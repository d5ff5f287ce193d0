import { invalidField, missingField, notFound, unknownField } from '../shared/errors.js';
import { ALL_TYPES, isWebhookType } from './types.js';
import type { DisabledReason, EndpointEvent, EndpointSettings, EndpointState } from './events.js';

export interface EndpointInput {
  url?: unknown;
  events?: unknown;
  active?: unknown;
  description?: unknown;
  maxPerSecond?: unknown;
}

const WRITABLE = ['url', 'events', 'active', 'description', 'maxPerSecond'];
/** decisions.md 12: a throttle of 1..1000 requests a second, or null for none. */
const MAX_PER_SECOND = 1000;

/**
 * The subscription list: known type names or ["*"] (which includes later types). An unknown
 * name is refused so a typo does not silently subscribe to nothing.
 */
export function normaliseEvents(value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0)
    throw invalidField('events', 'events must be a non-empty list of event types, or ["*"] for all of them.');
  const out: string[] = [];
  for (const t of value) {
    if (typeof t !== 'string') throw invalidField('events', 'events must hold event type names as strings.');
    if (t !== ALL_TYPES && !isWebhookType(t))
      throw invalidField('events', `"${t}" is not a webhook event type; see the event catalog, or use ["*"] for all.`);
    if (!out.includes(t)) out.push(t);
  }
  return out.includes(ALL_TYPES) ? [ALL_TYPES] : out;
}

function normaliseInput(input: EndpointInput, creating: boolean): Partial<EndpointSettings> {
  for (const k of Object.keys(input)) if (!WRITABLE.includes(k)) throw unknownField(k);
  const out: Partial<EndpointSettings> = {};
  if (input.url !== undefined) {
    if (typeof input.url !== 'string' || !input.url) throw invalidField('url', 'url must be an https:// address.');
    out.url = input.url;
  } else if (creating) throw missingField('url');
  if (input.events !== undefined) out.events = normaliseEvents(input.events);
  else if (creating) throw missingField('events', 'events is required: a list of event types, or ["*"].');
  if (input.active !== undefined) {
    if (typeof input.active !== 'boolean') throw invalidField('active', 'active must be true or false.');
    out.active = input.active;
  }
  if (input.description !== undefined) {
    if (input.description !== null && (typeof input.description !== 'string' || input.description.length > 500))
      throw invalidField('description', 'description must be a string of at most 500 characters, or null.');
    out.description = input.description;
  }
  if (input.maxPerSecond !== undefined) {
    const n = input.maxPerSecond;
    if (n !== null && (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_PER_SECOND))
      throw invalidField('maxPerSecond', `maxPerSecond must be a whole number of requests from 1 to ${MAX_PER_SECOND}, or null for no limit.`);
    out.maxPerSecond = n;
  }
  return out;
}

export const validateEndpointCreate = (input: EndpointInput) => normaliseInput(input, true);
export const validateEndpointUpdate = (input: EndpointInput) => normaliseInput(input, false);

export function assertEndpoint(s: EndpointState, team: number, id: number): void {
  if (!s.exists || s.deleted || s.team !== team) throw notFound('webhook endpoint', id);
}

export function decideCreateEndpoint(cmd: { id: number; input: EndpointInput; secret: string }, s: EndpointState): EndpointEvent[] {
  if (s.exists) throw new Error(`webhook endpoint ${cmd.id} already exists`);
  const v = validateEndpointCreate(cmd.input);
  // A create's url and events are required: validateEndpointCreate refused their absence.
  const url = v.url ?? '';
  const events = v.events ?? [];
  return [
    {
      type: 'WebhookEndpointCreated',
      data: { id: cmd.id, url, events, active: v.active ?? true, description: v.description ?? null, maxPerSecond: v.maxPerSecond ?? null, secret: cmd.secret },
    },
  ];
}

export function decideUpdateEndpoint(cmd: { id: number; team: number; input: EndpointInput }, s: EndpointState): EndpointEvent[] {
  const v = validateEndpointUpdate(cmd.input);
  assertEndpoint(s, cmd.team, cmd.id);
  const changes: Partial<EndpointSettings> = {};
  const differs = <K extends keyof EndpointSettings>(k: K) => v[k] !== undefined && JSON.stringify(s[k]) !== JSON.stringify(v[k]);
  if (differs('url')) changes.url = v.url;
  if (differs('events')) changes.events = v.events;
  if (differs('active')) changes.active = v.active;
  if (differs('description')) changes.description = v.description;
  if (differs('maxPerSecond')) changes.maxPerSecond = v.maxPerSecond;
  return Object.keys(changes).length ? [{ type: 'WebhookEndpointUpdated', data: { id: cmd.id, changes } }] : [];
}

/** `secret` as it is to be stored (sealed by the command for `generation`). */
export function decideRotateSecret(
  cmd: { id: number; team: number; secret: string; generation: number; expiresInSeconds?: unknown; now: Date },
  s: EndpointState,
): EndpointEvent[] {
  const x = cmd.expiresInSeconds ?? 0;
  if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 7 * 86400)
    throw invalidField('expiresInSeconds', 'expiresInSeconds must be a whole number of seconds from 0 to 604800 (7 days).');
  assertEndpoint(s, cmd.team, cmd.id);
  const previousExpiresAt = x > 0 ? new Date(cmd.now.getTime() + x * 1000).toISOString() : null;
  return [{ type: 'WebhookEndpointSecretRotated', data: { id: cmd.id, secret: cmd.secret, previousExpiresAt, generation: cmd.generation } }];
}

/**
 * The dispatcher's auto-disable (decisions.md 12). Only an active endpoint is disabled: one an
 * admin switched off, deleted, or another worker disabled first records nothing more.
 */
/**
 * The dispatcher's auto-disable. `sentTo`: the URL the failing attempt went to; an endpoint moved to
 * another URL since (an operator's PATCH while the attempt waited or ran) is not disabled for
 * what its old URL answered.
 */
export function decideDisableEndpoint(cmd: { id: number; team: number; reason: DisabledReason; sentTo?: string }, s: EndpointState): EndpointEvent[] {
  if (!s.exists || s.deleted || s.team !== cmd.team || !s.active) return [];
  if (cmd.sentTo !== undefined && s.url !== cmd.sentTo) return [];
  return [{ type: 'WebhookEndpointDisabled', data: { id: cmd.id, reason: cmd.reason } }];
}

export function decideDeleteEndpoint(cmd: { id: number; team: number }, s: EndpointState): EndpointEvent[] {
  assertEndpoint(s, cmd.team, cmd.id);
  return [{ type: 'WebhookEndpointDeleted', data: { id: cmd.id } }];
}
