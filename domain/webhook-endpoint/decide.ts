import type { DomainEvent } from '../shared/events.js';
import { invalidField, missingField, notFound, unknownField } from '../shared/errors.js';
import { ALL_TYPES, isWebhookType } from './types.js';
import { WEBHOOK_ENDPOINT, type EndpointState } from './events.js';

export interface EndpointInput {
  url?: unknown;
  events?: unknown;
  active?: unknown;
  description?: unknown;
}

const WRITABLE = ['url', 'events', 'active', 'description'];

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

function normaliseInput(input: EndpointInput, creating: boolean): Record<string, unknown> {
  for (const k of Object.keys(input)) if (!WRITABLE.includes(k)) throw unknownField(k);
  const out: Record<string, unknown> = {};
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
  return out;
}

export const validateEndpointCreate = (input: EndpointInput) => normaliseInput(input, true);
export const validateEndpointUpdate = (input: EndpointInput) => normaliseInput(input, false);

export function assertEndpoint(s: EndpointState, team: number, id: number): void {
  if (!s.exists || s.deleted || s.team !== team) throw notFound('webhook endpoint', id);
}

export function decideCreateEndpoint(cmd: { id: number; input: EndpointInput; secret: string }, s: EndpointState): DomainEvent[] {
  if (s.exists) throw new Error(`webhook endpoint ${cmd.id} already exists`);
  const v = validateEndpointCreate(cmd.input);
  return [
    {
      type: `${WEBHOOK_ENDPOINT}Created`,
      data: { id: cmd.id, url: v.url, events: v.events, active: v.active ?? true, description: v.description ?? null, secret: cmd.secret },
    },
  ];
}

export function decideUpdateEndpoint(cmd: { id: number; team: number; input: EndpointInput }, s: EndpointState): DomainEvent[] {
  const v = validateEndpointUpdate(cmd.input);
  assertEndpoint(s, cmd.team, cmd.id);
  const current: Record<string, unknown> = { url: s.url, events: s.events, active: s.active, description: s.description };
  const changes: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(v)) if (JSON.stringify(current[k]) !== JSON.stringify(val)) changes[k] = val;
  return Object.keys(changes).length ? [{ type: `${WEBHOOK_ENDPOINT}Updated`, data: { id: cmd.id, changes } }] : [];
}

export function decideRotateSecret(
  cmd: { id: number; team: number; secret: string; expiresInSeconds?: unknown; now: Date },
  s: EndpointState,
): DomainEvent[] {
  const x = cmd.expiresInSeconds ?? 0;
  if (typeof x !== 'number' || !Number.isInteger(x) || x < 0 || x > 7 * 86400)
    throw invalidField('expiresInSeconds', 'expiresInSeconds must be a whole number of seconds from 0 to 604800 (7 days).');
  assertEndpoint(s, cmd.team, cmd.id);
  const previousExpiresAt = x > 0 ? new Date(cmd.now.getTime() + x * 1000).toISOString() : null;
  return [{ type: `${WEBHOOK_ENDPOINT}SecretRotated`, data: { id: cmd.id, secret: cmd.secret, previousExpiresAt } }];
}

export function decideDeleteEndpoint(cmd: { id: number; team: number }, s: EndpointState): DomainEvent[] {
  assertEndpoint(s, cmd.team, cmd.id);
  return [{ type: `${WEBHOOK_ENDPOINT}Deleted`, data: { id: cmd.id } }];
}
