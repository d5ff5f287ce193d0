import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Sender } from '../../dispatcher/send.js';

/** The HTTP side of one attempt (dispatcher/send.ts): what is sent, what is read back, what is kept. */
const servers: http.Server[] = [];
const senders: Sender[] = [];
afterEach(async () => {
  for (const s of senders.splice(0)) s.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

async function serve(handler: http.RequestListener): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const server = http.createServer(handler);
  server.on('connection', () => connections++);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

const sender = (timeoutMs = 2_000) => {
  const s = new Sender({ timeoutMs, allowInsecure: true });
  senders.push(s);
  return s;
};

describe('sending one webhook attempt', () => {
  it('POSTs the body as JSON to the path and query given, with the headers given, on connections kept alive', async () => {
    const seen: Array<{ method?: string; url?: string; type?: string; agent?: string; sig?: string; body: string }> = [];
    const rx = await serve((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method, url: req.url, type: req.headers['content-type'], agent: req.headers['user-agent'], sig: req.headers['x-turnout-signature'] as string, body });
        res.writeHead(204).end();
      });
    });
    const s = sender();
    for (let i = 0; i < 10; i++) {
      const r = await s.send(`${rx.url}/hooks/in?team=7&n=${i}`, `{"n":${i}}`, { 'x-turnout-signature': 't=1,v1=ab' });
      expect(r).toMatchObject({ ok: true, responseStatus: 204, error: null, retryAfter: null });
    }
    expect(seen).toEqual([...Array(10).keys()].map((i) => ({ method: 'POST', url: `/hooks/in?team=7&n=${i}`, type: 'application/json', agent: 'Turnout-Webhooks/1', sig: 't=1,v1=ab', body: `{"n":${i}}` })));
    // Kept alive: ten attempts one after another on one connection, or two (the pool may open a
    // second while the first is still being handed back).
    expect(rx.connections()).toBeLessThanOrEqual(2);
  });

  it('keeps the receiver\u2019s Retry-After and its status, and names a redirect without following it', async () => {
    const rx = await serve((req, res) => {
      req.resume();
      if (req.url === '/busy') res.writeHead(429, { 'retry-after': '7' }).end('slow down');
      else res.writeHead(301, { location: 'https://elsewhere.example/hook' }).end();
    });
    const s = sender();
    expect(await s.send(`${rx.url}/busy`, '{}', {})).toMatchObject({ ok: false, responseStatus: 429, error: 'receiver answered 429', retryAfter: '7' });
    expect(await s.send(`${rx.url}/moved`, '{}', {})).toMatchObject({ ok: false, responseStatus: 301, error: 'redirect (301 to https://elsewhere.example/hook) not followed' });
  });

  it('reads no more of an answer than its cap: a flood is cut off and the attempt still counts', async () => {
    let written = 0;
    let closed = false;
    const rx = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      // Writes for as long as anyone reads, up to 64 MB.
      const pump = () => {
        while (written < 64 * 2 ** 20 && !closed && res.write(chunk)) written += chunk.length;
        if (written >= 64 * 2 ** 20) res.end();
      };
      res.on('drain', pump);
      res.on('close', () => (closed = true));
      pump();
    });
    const r = await sender().send(`${rx.url}/flood`, '{}', {});
    expect(r).toMatchObject({ ok: true, responseStatus: 200, error: null });
    // The receiver learns of the cut when its socket closes, a moment after the sender's answer.
    await expect.poll(() => closed, { timeout: 10_000 }).toBe(true);
    expect(written).toBeLessThan(16 * 2 ** 20);
  });

  it('counts an answer that never ends as a time-out, whatever part of it came', async () => {
    const rx = await serve((req, res) => {
      req.resume();
      res.writeHead(200).write('partial');
    });
    const r = await sender(300).send(`${rx.url}/slow`, '{}', {});
    expect(r).toMatchObject({ ok: false, responseStatus: null, error: 'timed out after 300 ms' });
    expect(r.durationMs).toBeGreaterThanOrEqual(280);
  });
});
