import { randomBytes } from 'node:crypto';
import {
  decideCreateEndpoint,
  decideDeleteEndpoint,
  decideDisableEndpoint,
  decideRotateSecret,
  decideUpdateEndpoint,
  type EndpointInput,
  validateEndpointCreate,
  validateEndpointUpdate,
} from '../domain/webhook-endpoint/decide.js';
import { type DisabledReason, endpointEvolver, nextSecretGeneration, secretBinding, webhookEndpointStream } from '../domain/webhook-endpoint/events.js';
import { invalidField } from '../domain/shared/errors.js';
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';

/** `whsec_` + 32 random bytes in base64 (decisions.md 7). */
export const newSecret = () => 'whsec_' + randomBytes(32).toString('base64');

/**
 * A secret as the log and the read models keep it: sealed under the main key, bound to its
 * endpoint and generation (decisions.md §17). Only the answer to the create or rotate that made
 * it carries it in plaintext.
 */
const sealSecret = (deps: CommandDeps, id: number, generation: number, secret: string) => deps.mainSealer.sealText(secret, secretBinding(id, generation));

async function checkUrl(deps: CommandDeps, url: unknown): Promise<void> {
  if (typeof url !== 'string') return; // the domain names the type error
  const unsafe = await deps.checkWebhookUrl(url);
  if (unsafe) throw invalidField('url', unsafe);
}

export async function createEndpoint(deps: CommandDeps, ctx: WriteContext, input: EndpointInput): Promise<{ id: number; secret: string }> {
  validateEndpointCreate(input);
  await checkUrl(deps, input.url);
  const id = await deps.ids.next('webhook_endpoint');
  const secret = newSecret();
  const r = await handle(deps.log, webhookEndpointStream(id), endpointEvolver, ctx, (s) => decideCreateEndpoint({ id, input, secret: sealSecret(deps, id, 1, secret) }, s), { newStream: true });
  await deps.settle(r.position, ctx);
  return { id, secret };
}

export async function updateEndpoint(deps: CommandDeps, ctx: WriteContext, id: number, input: EndpointInput): Promise<void> {
  validateEndpointUpdate(input);
  if (input.url !== undefined) await checkUrl(deps, input.url);
  const r = await handle(deps.log, webhookEndpointStream(id), endpointEvolver, ctx, (s) => decideUpdateEndpoint({ id, team: ctx.team, input }, s));
  await deps.settle(r.position, ctx);
}

export async function rotateEndpointSecret(deps: CommandDeps, ctx: WriteContext, id: number, expiresInSeconds: unknown): Promise<string> {
  const secret = newSecret();
  const r = await handle(deps.log, webhookEndpointStream(id), endpointEvolver, ctx, (s) => {
    // Decided again on a conflict, so the generation comes from the state it is decided on.
    const generation = nextSecretGeneration(s);
    return decideRotateSecret({ id, team: ctx.team, secret: sealSecret(deps, id, generation, secret), generation, expiresInSeconds, now: ctx.now }, s);
  });
  await deps.settle(r.position, ctx);
  return secret;
}

export async function deleteEndpoint(deps: CommandDeps, ctx: WriteContext, id: number): Promise<void> {
  const r = await handle(deps.log, webhookEndpointStream(id), endpointEvolver, ctx, (s) => decideDeleteEndpoint({ id, team: ctx.team }, s));
  await deps.settle(r.position, ctx);
}

/** The dispatcher's auto-disable; it runs outside any request, so its source is the application. */
export async function disableEndpoint(deps: CommandDeps, target: { id: number; team: number }, reason: DisabledReason, sentTo?: string, now = new Date()): Promise<void> {
  const ctx: WriteContext = { team: target.team, source: 'Application', keyName: null, correlationId: `webhook-auto-disable-${target.id}`, now };
  const r = await handle(deps.log, webhookEndpointStream(target.id), endpointEvolver, ctx, (s) => decideDisableEndpoint({ id: target.id, team: target.team, reason, sentTo }, s));
  await deps.settle(r.position, ctx);
}
