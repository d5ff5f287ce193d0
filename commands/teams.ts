import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { decideCreateTeam, decideIssueKey, decideRevokeKey, decideUpdateTeam, type TeamInput } from '../domain/team/decide.js';
import { teamEvolver, teamStream } from '../domain/team/events.js';
import { API_KEYS, type ApiKeyDoc, TEAMS } from '../projections/teams.js';
import { eq } from '../projections/store/port.js';
import { handle } from './aggregate.js';
import type { WriteContext } from './context.js';
import type { CommandDeps } from './deps.js';

export async function createTeam(deps: CommandDeps, ctx: Omit<WriteContext, 'team'>, input: TeamInput): Promise<number> {
  const id = await deps.ids.next('team');
  const r = await handle(deps.log, teamStream(id), teamEvolver, { ...ctx, team: id }, (s) => decideCreateTeam({ id, input }, s));
  await deps.settle(r.position, ctx);
  return id;
}

export async function updateTeam(deps: CommandDeps, ctx: WriteContext, input: TeamInput): Promise<void> {
  const r = await handle(deps.log, teamStream(ctx.team), teamEvolver, ctx, (s) => decideUpdateTeam({ id: ctx.team, input }, s));
  await deps.settle(r.position, ctx);
}

export async function teamExists(deps: CommandDeps, team: number): Promise<boolean> {
  return (await deps.store.get(TEAMS, team)) !== null;
}

/**
 * Keys look like `tko_<prefix>_<secret>`: the prefix (random, public) finds the key's record,
 * the secret (32 random bytes) is checked against a SHA-256 hash in constant time. A key has
 * 256 bits of entropy, so a fast hash is enough; only the hash is stored.
 */
const KEY_FORMAT = /^tko_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;
const hashSecret = (secret: string) => hash('sha256', secret, 'hex');
/** Compared against when the prefix finds no key, so that an unknown key costs what a known one does. */
const NO_HASH = Buffer.alloc(32);

export async function issueApiKey(
  deps: CommandDeps,
  ctx: WriteContext,
  input: { name: unknown; scope: unknown },
): Promise<{ keyId: number; key: string }> {
  const prefix = randomBytes(6).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  const keyId = await deps.ids.next('api_key');
  const r = await handle(deps.log, teamStream(ctx.team), teamEvolver, ctx, (s) =>
    decideIssueKey({ keyId, name: input.name, scope: input.scope, prefix: `tko_${prefix}`, hash: hashSecret(secret) }, s),
  );
  await deps.settle(r.position, ctx);
  return { keyId, key: `tko_${prefix}_${secret}` };
}

export async function revokeApiKey(deps: CommandDeps, ctx: WriteContext, keyId: number): Promise<void> {
  const r = await handle(deps.log, teamStream(ctx.team), teamEvolver, ctx, (s) => decideRevokeKey({ keyId }, s));
  await deps.settle(r.position, ctx);
}

/**
 * Keys this process has verified, by a SHA-256 of the presented string (never the key itself,
 * which a heap dump would show), to the record they matched and the mark when it was read. A
 * later request with the same key skips the prefix query and the comparison, and while the mark
 * is the same it skips the read too; otherwise it reads the record by id again, so a revocation
 * counts at once. The mark is the process's API-key mark where it keeps one (deps.keyMark: only
 * an API-key event moves it, so writes of records cost the keys nothing), else the store's change
 * mark (ReadStore.changeMark: any commit to the read models, by any process). A store with
 * neither (MongoDB) is read on every request. Bounded: emptied when full.
 */
const verified = new WeakMap<object, Map<string, { key: ApiKeyDoc; mark: number | undefined }>>();
const VERIFIED_MAX = 10_000;

type KeyDeps = Pick<CommandDeps, 'store' | 'keyMark'>;

function cacheOf(store: object): Map<string, { key: ApiKeyDoc; mark: number | undefined }> {
  let cache = verified.get(store);
  if (!cache) verified.set(store, (cache = new Map()));
  return cache;
}

const markOf = (deps: KeyDeps): number | undefined => (deps.keyMark ? deps.keyMark() : deps.store.changeMark?.());

/**
 * The key's record when this process verified the presented key before and its mark has not
 * moved since: no read and no await, the common case of every request. Null otherwise, and
 * always where the store has no mark: verifyApiKey then decides.
 */
export function knownApiKey(deps: KeyDeps, presented: string): ApiKeyDoc | null {
  const mark = markOf(deps);
  if (mark === undefined) return null;
  const known = cacheOf(deps.store).get(hash('sha256', presented, 'base64'));
  return known && known.mark === mark ? known.key : null;
}

/** The key's record when the presented key is genuine and not revoked; otherwise null. */
export async function verifyApiKey(deps: KeyDeps, presented: string): Promise<ApiKeyDoc | null> {
  const cache = cacheOf(deps.store);
  // Asked before the read: a commit the read below may not see still changes the next mark.
  const mark = markOf(deps);
  const digest = hash('sha256', presented, 'base64');
  const known = cache.get(digest);
  if (known) {
    if (mark !== undefined && known.mark === mark) return known.key;
    const current = await deps.store.get<ApiKeyDoc>(API_KEYS, known.key.id);
    if (current && current._hash === known.key._hash && !current.revokedAt) {
      cache.set(digest, { key: current, mark });
      return current;
    }
    cache.delete(digest);
    return null;
  }
  const m = KEY_FORMAT.exec(presented);
  if (!m) return null;
  const found = await deps.store.find<ApiKeyDoc>({ collection: API_KEYS, filter: eq('prefix', `tko_${m[1]}`), page: { page: 1, pageSize: 1 } });
  const key = found.items[0];
  const expected = key ? Buffer.from(key._hash, 'hex') : NO_HASH;
  const same = timingSafeEqual(expected, hash('sha256', m[2], 'buffer'));
  if (!key || !same || key.revokedAt) return null;
  if (cache.size >= VERIFIED_MAX) cache.clear();
  cache.set(digest, { key, mark });
  return key;
}
