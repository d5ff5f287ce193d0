import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { paced, percentile, post } from './lib.js';

/**
 * The subscriber and the writing client of the webhook benchmark (webhooks.ts), a process of its
 * own as they are in life: the receiver's and the client's work then runs neither on the
 * server's event loop nor on its CPU clock, and a write's 2xx and its webhook's arrival are both
 * timed here, on one clock. On the server's main thread, every arrival would wait behind the
 * server's own work there (and every 2xx behind the receiver's).
 *
 * Forked by webhooks.ts; it answers `{ port }` once listening, then one answer per request:
 * - `latency`: writes at `rate` a second for `ms` and reports from each 2xx to its webhook;
 * - `count`: the deliveries the receiver has had in all;
 * - `waitCount`: answers once the receiver has had `n` deliveries in all;
 * - `close`: stops the receiver and exits.
 */
export type PeerRequest =
  | { id: number; op: 'latency'; origin: string; auth: string; rate: number; ms: number }
  | { id: number; op: 'waitCount'; n: number; timeoutMs: number }
  | { id: number; op: 'count' }
  | { id: number; op: 'close' };

export interface LatencyResult {
  p50: number;
  p99: number;
  achieved: number;
  failures: number;
  lost: number;
}

const arrivals = new Map<number, number>();
let count = 0;
const waiters = new Set<() => void>();

const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    const id = (() => {
      try {
        return JSON.parse(Buffer.concat(chunks).toString()).data?.PkConstituent as number | undefined;
      } catch {
        return undefined;
      }
    })();
    if (id !== undefined && !arrivals.has(id)) arrivals.set(id, at);
    count++;
    for (const w of waiters) w();
    res.writeHead(204).end();
  });
});

/** Writes at a fixed rate through the public API; latency is from each 2xx to its webhook's arrival. */
async function latency(r: Extract<PeerRequest, { op: 'latency' }>): Promise<LatencyResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const answered = new Map<number, number>();
  let failures = 0;
  const { achieved } = await paced(r.rate, r.ms, (i) =>
    post(agent, `${r.origin}/api/v1/constituents`, JSON.stringify({ FirstName: 'Lat', LastName: `N${i}` }), { authorization: r.auth })
      .then((res) => {
        if (res.status !== 201) failures++;
        else answered.set(JSON.parse(res.text).constituent.PkConstituent, performance.now());
      })
      .catch(() => void failures++),
  );
  const deadline = Date.now() + 30_000;
  while ([...answered.keys()].some((id) => !arrivals.has(id)) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
  // A webhook may land before its write's answer is read; that counts as no delay.
  const lat = [...answered].map(([id, t]) => Math.max(0, (arrivals.get(id) ?? Infinity) - t)).sort((a, b) => a - b);
  agent.destroy();
  return { p50: percentile(lat, 0.5), p99: percentile(lat, 0.99), achieved, failures, lost: lat.filter((x) => x === Infinity).length };
}

async function waitCount(n: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (count < n && Date.now() < deadline) {
    await new Promise<void>((res) => {
      const done = () => (waiters.delete(done), clearTimeout(timer), res());
      const timer = setTimeout(done, 50);
      waiters.add(done);
    });
  }
  if (count < n) throw new Error(`receiver got ${count} of ${n} within ${timeoutMs} ms`);
  return count;
}

async function answer(r: PeerRequest): Promise<unknown> {
  if (r.op === 'latency') return latency(r);
  if (r.op === 'waitCount') return waitCount(r.n, r.timeoutMs);
  if (r.op === 'count') return count;
  server.closeAllConnections();
  await new Promise<void>((res) => server.close(() => res()));
  return null;
}

process.on('message', (r: PeerRequest) => {
  answer(r).then(
    (ok) => process.send!({ id: r.id, ok }, () => r.op === 'close' && process.exit(0)),
    (err) => process.send!({ id: r.id, err: String(err) }),
  );
});
// The benchmark gone (a crash, ^C): so is its peer.
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as import('node:net').AddressInfo).port }));
