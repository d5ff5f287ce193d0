import type { Evolver } from '../shared/events.js';

/**
 * A webhook endpoint of a team. Events:
 * WebhookEndpointCreated {id, url, events, active, description, secret},
 * WebhookEndpointUpdated {id, changes: {url?, events?, active?, description?}},
 * WebhookEndpointSecretRotated {id, secret, previousExpiresAt (ISO or null: dropped at once)},
 * WebhookEndpointDeleted {id}.
 *
 * The signing secret has to be in the log: the dispatcher signs with it on every attempt.
 */
export const WEBHOOK_ENDPOINT = 'WebhookEndpoint';
export const webhookEndpointStream = (id: number) => `webhook_endpoint-${id}`;

export interface SigningSecret {
  secret: string;
  /** ISO date-time after which it no longer signs; null for the current secret. */
  expiresAt: string | null;
}

export interface EndpointState {
  exists: boolean;
  deleted: boolean;
  id: number;
  team: number;
  url: string;
  events: string[];
  active: boolean;
  description: string | null;
  /** Newest first: the current secret, then rotated ones still in their overlap. */
  secrets: SigningSecret[];
  createdAt: string | null;
}

export const emptyEndpoint = (): EndpointState => ({
  exists: false,
  deleted: false,
  id: 0,
  team: 0,
  url: '',
  events: [],
  active: false,
  description: null,
  secrets: [],
  createdAt: null,
});

interface Ev {
  type: string;
  data: Record<string, unknown>;
  metadata?: { team: number; at: string };
}

export function evolveEndpoint(s: EndpointState, e: Ev): EndpointState {
  const d = e.data;
  switch (e.type) {
    case `${WEBHOOK_ENDPOINT}Created`:
      return {
        exists: true,
        deleted: false,
        id: d.id as number,
        team: e.metadata?.team ?? 0,
        url: d.url as string,
        events: d.events as string[],
        active: d.active as boolean,
        description: (d.description as string | null) ?? null,
        secrets: [{ secret: d.secret as string, expiresAt: null }],
        createdAt: e.metadata?.at ?? null,
      };
    case `${WEBHOOK_ENDPOINT}Updated`:
      return { ...s, ...(d.changes as Partial<EndpointState>) };
    case `${WEBHOOK_ENDPOINT}SecretRotated`: {
      const previous = s.secrets[0];
      const kept = d.previousExpiresAt && previous ? [{ secret: previous.secret, expiresAt: d.previousExpiresAt as string }] : [];
      // Older overlapping secrets keep their own expiry.
      const older = s.secrets.slice(1).filter((x) => x.expiresAt !== null);
      return { ...s, secrets: [{ secret: d.secret as string, expiresAt: null }, ...kept, ...older] };
    }
    case `${WEBHOOK_ENDPOINT}Deleted`:
      return { ...s, deleted: true, active: false };
    default:
      return s;
  }
}

export const endpointEvolver: Evolver<EndpointState> = { initial: emptyEndpoint, evolve: (s, e) => evolveEndpoint(s, e as Ev) };

/** The secrets that sign at `now`: the current one first, then unexpired rotated ones. */
export function signingSecrets(s: EndpointState, now: Date): string[] {
  return s.secrets.filter((x) => x.expiresAt === null || Date.parse(x.expiresAt) > now.getTime()).map((x) => x.secret);
}
