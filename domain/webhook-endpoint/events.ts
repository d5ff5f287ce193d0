import { type DomainEvent, type Evolver, type Folded, unknownEvent } from '../shared/events.js';

/**
 * A webhook endpoint of a team. Events:
 * WebhookEndpointCreated {id, url, events, active, description, maxPerSecond?, secret},
 * WebhookEndpointUpdated {id, changes: {url?, events?, active?, description?, maxPerSecond?}},
 * WebhookEndpointSecretRotated {id, secret, previousExpiresAt (ISO, or null: every older secret dropped at once), generation?},
 * WebhookEndpointDisabled {id, reason} (the dispatcher's auto-disable, decisions.md 12),
 * WebhookEndpointDeleted {id}.
 *
 * The signing secret has to be in the log: the dispatcher signs with it on every attempt. It is
 * there sealed under the main key (decisions.md §17), bound to the endpoint and its generation
 * (secretBinding); the domain only carries it and never sees the key. Events written before
 * sealing hold it in plaintext, which readers pass through.
 */
export const WEBHOOK_ENDPOINT = 'WebhookEndpoint';
export const webhookEndpointStream = (id: number) => `webhook_endpoint-${id}`;

export interface SigningSecret {
  /** Sealed (`sealed:v1:...`), or plaintext when written before sealing. */
  secret: string;
  /**
   * 1 for the secret the endpoint was created with, one more at each rotation; part of what a
   * sealed secret is bound to. Absent from read models written before it was counted (those
   * secrets are plaintext).
   */
  generation?: number;
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
  /** Requests per second the receiver accepts at most; null for no limit. */
  maxPerSecond: number | null;
  /** When and why the dispatcher disabled it; both null while active (and after a re-enable). */
  disabledAt: string | null;
  disabledReason: DisabledReason | null;
  /** When it was last made active (created so, or re-enabled): a run of failures counts from no earlier. */
  activeSince: string | null;
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
  maxPerSecond: null,
  disabledAt: null,
  disabledReason: null,
  activeSince: null,
  secrets: [],
  createdAt: null,
});

/** What an endpoint's settings are; an update carries the ones that changed. */
export type EndpointSettings = {
  url: string;
  events: string[];
  active: boolean;
  description: string | null;
  maxPerSecond: number | null;
};

/** `gone`: the receiver answered 410; `failing`: every attempt failed for the configured hours. */
export type DisabledReason = 'gone' | 'failing';

export type EndpointEvent =
  | DomainEvent<'WebhookEndpointCreated', Omit<EndpointSettings, 'maxPerSecond'> & { id: number; secret: string; maxPerSecond?: number | null }>
  | DomainEvent<'WebhookEndpointUpdated', { id: number; changes: Partial<EndpointSettings> }>
  | DomainEvent<'WebhookEndpointSecretRotated', { id: number; secret: string; previousExpiresAt: string | null; generation?: number }>
  | DomainEvent<'WebhookEndpointDisabled', { id: number; reason: DisabledReason }>
  | DomainEvent<'WebhookEndpointDeleted', { id: number }>;

export function evolveEndpoint(s: EndpointState, e: Folded<EndpointEvent>): EndpointState {
  switch (e.type) {
    case 'WebhookEndpointCreated': {
      const d = e.data;
      return {
        exists: true,
        deleted: false,
        id: d.id,
        team: e.metadata?.team ?? 0,
        url: d.url,
        events: d.events,
        active: d.active,
        description: d.description ?? null,
        maxPerSecond: d.maxPerSecond ?? null,
        disabledAt: null,
        disabledReason: null,
        activeSince: d.active ? (e.metadata?.at ?? null) : null,
        secrets: [{ secret: d.secret, expiresAt: null, generation: 1 }],
        createdAt: e.metadata?.at ?? null,
      };
    }
    case 'WebhookEndpointUpdated':
      // Re-enabling clears why it was disabled (decisions.md 12).
      return e.data.changes.active
        ? { ...s, ...e.data.changes, disabledAt: null, disabledReason: null, activeSince: e.metadata?.at ?? null }
        : { ...s, ...e.data.changes };
    case 'WebhookEndpointDisabled':
      return { ...s, active: false, disabledAt: e.metadata?.at ?? null, disabledReason: e.data.reason };
    case 'WebhookEndpointSecretRotated': {
      // Rotations from before sealing carry no generation: counted from the one before.
      const current = { secret: e.data.secret, expiresAt: null, generation: e.data.generation ?? nextSecretGeneration(s) };
      const expiresAt = e.data.previousExpiresAt;
      // No overlap retires every older secret at once, one still inside an earlier overlap too
      // (decisions.md 12); with one, older overlapping secrets keep their own expiry.
      if (!expiresAt || !s.secrets[0]) return { ...s, secrets: [current] };
      const older = s.secrets.slice(1).filter((x) => x.expiresAt !== null);
      return { ...s, secrets: [current, { ...s.secrets[0], expiresAt }, ...older] };
    }
    case 'WebhookEndpointDeleted':
      return { ...s, deleted: true, active: false };
    default:
      return unknownEvent(e, s);
  }
}

export const endpointEvolver: Evolver<EndpointState, EndpointEvent> = { initial: emptyEndpoint, evolve: evolveEndpoint };

/** The secrets that sign at `now`: the current one first, then unexpired rotated ones. */
export function liveSecrets(s: EndpointState, now: Date): SigningSecret[] {
  return s.secrets.filter((x) => x.expiresAt === null || Date.parse(x.expiresAt) > now.getTime());
}

export const signingSecrets = (s: EndpointState, now: Date): string[] => liveSecrets(s, now).map((x) => x.secret);

/** The generation the endpoint's next secret (a rotation's) gets. */
export const nextSecretGeneration = (s: EndpointState): number => (s.secrets[0]?.generation ?? 0) + 1;

/**
 * What a sealed secret is bound to (the seal's associated data): a sealed secret copied to
 * another endpoint, or to another generation of the same one, does not open there.
 */
export const secretBinding = (endpointId: number, generation: number | undefined) => `${webhookEndpointStream(endpointId)}#${generation ?? 0}`;
