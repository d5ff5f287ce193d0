import http from 'node:http';
import { metadataOf } from '../commands/context.js';
import { constituentStream } from '../domain/constituent/events.js';
import { NO_STREAM } from '../eventlog/port.js';
import { median, percentile } from './lib.js';
import { startProduct } from './product.js';

const EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 20_000);
const TARGET = 2_000; // envelopes per second to a fast receiver (issue 16)
const LIVE_EVERY_MS = 100; // one live write this often while the replay runs

/** A receiver that answers 204 at once, counting replayed envelopes and noting when each live one arrived. */
async function startReceiver() {
  let replayed = 0;
  const live = new Map<string, number>();
  const server = http.createServer({ keepAliveTimeout: 30_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const name = (JSON.parse(Buffer.concat(chunks).toString()) as { data?: { LastName?: string } }).data?.LastName ?? '';
      if (name.startsWith('Live')) {
        if (!live.has(name)) live.set(name, performance.now());
      } else replayed++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as import('node:net').AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    live,
    get replayed() {
      return replayed;
    },
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/**
 * Replay throughput: `events` constituent changes written before the endpoint exists, then one
 * replay of all of them, timed from the 202 until the job says done (every envelope delivered);
 * meanwhile a live write every 100 ms, timed from its 2xx to its webhook's arrival.
 */
export async function measureReplay({ events = EVENTS } = {}): Promise<string[]> {
  const p = await startProduct();
  const rx = await startReceiver();
  const admin = { authorization: 'Bearer bench-admin-token', 'content-type': 'application/json' };
  try {
    const { log } = p.runtime.services;
    const ctx = { team: p.team, source: 'Public API' as const, keyName: 'Bench', correlationId: 'bench', now: new Date() };
    for (let from = 0; from < events; from += 1000) {
      const n = Math.min(1000, events - from);
      await Promise.all(
        Array.from({ length: n }, (_, k) => {
          const id = 20_000_000 + from + k;
          return log.append(constituentStream(id), [{ type: 'ConstituentCreated', data: { id, fields: { LastName: `R${id}`, ConstituentName: `R${id}` } }, metadata: metadataOf(ctx) }], NO_STREAM);
        }),
      );
    }
    const ep = await p.app.inject({ method: 'POST', url: `/admin/v1/teams/${p.team}/webhook-endpoints`, headers: admin, payload: { url: rx.url, events: ['constituent.created'] } });
    if (ep.statusCode !== 201) throw new Error(`creating the endpoint: ${ep.statusCode} ${ep.body}`);
    const base = `/admin/v1/teams/${p.team}/webhook-endpoints/${ep.json().webhookEndpoint.id}`;

    const t0 = performance.now();
    const started = await p.app.inject({ method: 'POST', url: `${base}/replay`, headers: admin, payload: { from: '2000-01-01T00:00:00Z' } });
    if (started.statusCode !== 202) throw new Error(`starting the replay: ${started.statusCode} ${started.body}`);
    const id = started.json().replay.id as string;
    const answered = new Map<string, number>();
    let replay = started.json().replay as { status: string; queued: number; sent: number; failed: number };
    for (let i = 0; replay.status === 'running'; i++) {
      const name = `Live${i}`;
      const w = await p.app.inject({ method: 'POST', url: '/api/v1/constituents', headers: { authorization: p.auth, 'content-type': 'application/json' }, payload: { LastName: name } });
      if (w.statusCode === 201) answered.set(name, performance.now());
      await new Promise((r) => setTimeout(r, LIVE_EVERY_MS));
      replay = (await p.app.inject({ method: 'GET', url: `${base}/replays/${id}`, headers: admin })).json().replay;
    }
    const seconds = (performance.now() - t0) / 1000;
    const deadline = Date.now() + 10_000;
    while ([...answered.keys()].some((n) => !rx.live.has(n)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const lat = [...answered].map(([n, at]) => Math.max(0, (rx.live.get(n) ?? Infinity) - at)).sort((a, b) => a - b);
    const rate = replay.sent / seconds;
    return [
      `replay of ${events.toLocaleString('en')} envelopes written before the endpoint existed: ${replay.status}, ${replay.sent} sent, ${replay.failed} failed, ${rx.replayed} received in ${seconds.toFixed(1)} s = ${rate.toFixed(0)} envelopes/s (target >= ${TARGET}: ${rate >= TARGET ? 'met' : 'NOT met'})`,
      `live writes during the replay (${lat.length}, one per ${LIVE_EVERY_MS} ms), 2xx to receiver: p50 ${median(lat).toFixed(1)} ms, max ${percentile(lat, 1).toFixed(1)} ms`,
    ];
  } finally {
    await rx.close();
    await p.close();
  }
}

export async function run(): Promise<{ name: string; lines: string[] }> {
  return { name: 'replay', lines: await measureReplay() };
}
