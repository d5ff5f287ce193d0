import type { ConnectionOptions } from '@nats-io/transport-node';

/**
 * Connection options from TURNOUT_NATS_URL. nats.js 3.x does not read credentials from a URL
 * (`nats://user:pass@host`): they would be dropped and the server would refuse the connection,
 * so they are taken out of the URL and passed as `user`/`pass`, or as `token` when only a user
 * part is given (`nats://s3cret@host`), as nats-server reads a URL's user part. Several servers may
 * be given separated by commas; the credentials are the first ones found.
 */
export function natsConnectOptions(url: string): Pick<ConnectionOptions, 'servers' | 'user' | 'pass' | 'token'> {
  const servers: string[] = [];
  const auth: Pick<ConnectionOptions, 'user' | 'pass' | 'token'> = {};
  for (const one of url.split(',').map((s) => s.trim()).filter(Boolean)) {
    const u = new URL(one.includes('://') ? one : `nats://${one}`);
    servers.push(`${u.protocol}//${u.host}`);
    if (!u.username || auth.user || auth.token) continue;
    if (u.password) Object.assign(auth, { user: decodeURIComponent(u.username), pass: decodeURIComponent(u.password) });
    else auth.token = decodeURIComponent(u.username);
  }
  return { servers, ...auth };
}
