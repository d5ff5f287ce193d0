import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { App } from '../../api/app.js';

/** One request the SDK sent, and what came back (no status: no answer reached it). */
export interface Sent {
  method: string;
  url: string;
  key: string | undefined;
  status?: number;
}

/**
 * A fetch that records what the SDK sends through it, for assertions on retries and their keys;
 * `before` runs as each request leaves (to act while a long-poll is in flight, say).
 */
export function recordingFetch(before?: (s: Sent) => void) {
  const sent: Sent[] = [];
  const f: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const s: Sent = { method: init?.method ?? 'GET', url: String(input), key: headers.get('idempotency-key') ?? undefined };
    sent.push(s);
    before?.(s);
    const r = await fetch(input, init);
    s.status = r.status;
    return r;
  };
  return { sent, fetch: f };
}

/** Serves the in-process app on a loopback port: the SDK talks real HTTP to it. */
export async function listen(app: App): Promise<string> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/**
 * A TCP proxy in front of `target` that, for the first `cuts` connections, forwards the request
 * and lets the server answer, then drops the client's connection instead of passing the answer
 * on: the server has committed, the client saw only a broken connection.
 */
export async function cuttingProxy(target: string, cuts = 1) {
  const { hostname, port } = new URL(target);
  let left = cuts;
  let cut = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    const cutThis = left-- > 0;
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      if (!cutThis) return void client.write(chunk);
      cut++;
      client.destroy();
      upstream.destroy();
    });
    upstream.on('end', () => client.end());
    client.on('close', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** How many answers it has dropped. */
    cut: () => cut,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
