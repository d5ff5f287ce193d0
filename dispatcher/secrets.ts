import { type EndpointState, liveSecrets, secretBinding, type SigningSecret } from '../domain/webhook-endpoint/events.js';
import { Sealer } from '../eventlog/sealing.js';
import { eq, type ReadStore } from '../projections/store/port.js';
import { WEBHOOK_ENDPOINTS, type WebhookEndpointDoc } from '../projections/webhook-endpoints.js';

/**
 * A sealed signing secret this process's main key does not open: another TURNOUT_MAIN_KEY sealed
 * it, or the value was altered. Its message names the endpoint and what to do, never the secret.
 */
export class SecretUnopenable extends Error {
  readonly code = 'main_key_mismatch';
  constructor(readonly endpointId: number) {
    super(
      `webhook endpoint ${endpointId}'s signing secret was sealed under another main key than this process's: ` +
        'give every process of the deployment the same TURNOUT_MAIN_KEY (or the data dir its main-key file), ' +
        'or rotate the secret (expiresInSeconds 0) if that key is lost',
    );
  }
}

/**
 * Secrets already opened, by the stored entry they came from: the worker's endpoint cache hands
 * out the same entries until the endpoint changes, so each is opened once, not at every attempt
 * (an open costs about as much as signing, which was moved off the main thread for its cost).
 * Held in memory only, and weakly: an entry dropped from the cache takes its plaintext along.
 */
const opened = new WeakMap<Sealer, WeakMap<SigningSecret, { endpointId: number; plain: string }>>();

/**
 * The plaintext of one stored secret (decisions.md §17): a sealed one opened with the main key
 * for its endpoint and generation, one written before sealing existed passed through.
 */
export function openSecret(sealer: Sealer, endpointId: number, s: SigningSecret): string {
  if (!Sealer.isSealedText(s.secret)) return s.secret;
  const known = opened.get(sealer)?.get(s);
  // The binding holds for a remembered one too: the same entry asked for another endpoint is opened (and refused) again.
  if (known?.endpointId === endpointId) return known.plain;
  let plain: string;
  try {
    plain = sealer.openText(s.secret, secretBinding(endpointId, s.generation));
  } catch {
    throw new SecretUnopenable(endpointId);
  }
  let bySecret = opened.get(sealer);
  if (!bySecret) opened.set(sealer, (bySecret = new WeakMap()));
  bySecret.set(s, { endpointId, plain });
  return plain;
}

/**
 * The secrets that sign at `now`, in plaintext, the current one first. Throws SecretUnopenable
 * when any of them does not open: a delivery signed with only some of them, or with none, would
 * reach the receiver mis-signed.
 */
export const openSigningSecrets = (sealer: Sealer, ep: EndpointState, now: Date): string[] => liveSecrets(ep, now).map((s) => openSecret(sealer, ep.id, s));

/** How many endpoints the start-up check looks at: enough to tell a wrong key, cheap on any deployment. */
const CHECKED_AT_START = 100;

/**
 * The endpoints (among the first CHECKED_AT_START) whose current secret is sealed and does not
 * open with `sealer`: a process started with another main key than the one that sealed them.
 */
export async function unopenableSecrets(store: ReadStore, sealer: Sealer): Promise<number[]> {
  const page = await store.find<WebhookEndpointDoc>({ collection: WEBHOOK_ENDPOINTS, filter: eq('_deleted', false), sort: [{ field: 'id', dir: 'asc' }], page: { page: 1, pageSize: CHECKED_AT_START } });
  const failed: number[] = [];
  for (const doc of page.items) {
    const current = doc._secrets[0];
    if (!current) continue;
    try {
      openSecret(sealer, doc.id, current);
    } catch (err) {
      if (err instanceof SecretUnopenable) failed.push(doc.id);
      else throw err;
    }
  }
  return failed;
}
