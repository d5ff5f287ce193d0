import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-http.js';
import { startTestApp, type TestApp } from '../support/app.js';

const HEADERS_TIMEOUT = 600;
/**
 * What would close a socket the time-outs under test left open: far above them, so that the bounds
 * below leave a busy machine seconds of slack and still tell the two apart.
 */
const IDLE_TIMEOUT = 20_000;

let t: TestApp;
let port: number;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ connections: { headersTimeoutMs: HEADERS_TIMEOUT, requestTimeoutMs: 1500, keepAliveTimeoutMs: 500, idleTimeoutMs: IDLE_TIMEOUT, maxConnections: 500 } });
  key = (await t.team()).keys.Integration.key;
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as { port: number }).port;
});
afterAll(() => t.close());

/** Opens a loopback socket that sends nothing; resolves with how long the server kept it open. */
function idleSocket(bytes = ''): { opened: Promise<void>; closedAfter: Promise<number> } {
  const socket = net.connect(port, '127.0.0.1');
  const start = Date.now();
  socket.on('error', () => {});
  // Read what the server sends (its 408), or the socket never sees the server's close.
  socket.resume();
  const opened = new Promise<void>((resolve) => socket.on('connect', () => (bytes && socket.write(bytes), resolve())));
  const closedAfter = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now() - start)));
  return { opened, closedAfter };
}

describe('idle connections', () => {
  it('closes 300 sockets that send nothing (or only part of their headers) within the header time-out, and serves a normal client meanwhile', async () => {
    const idle = Array.from({ length: 300 }, (_, i) => idleSocket(i % 2 ? 'GET /healthz HTTP/1.1\r\nHost: x\r\n' : ''));
    await Promise.all(idle.map((s) => s.opened));
    const normal = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(normal.status).toBe(200);
    const lifetimes = await Promise.all(idle.map((s) => s.closedAfter));
    // The header time-out plus Node's check interval (a quarter of it) and scheduling slack on a busy machine.
    expect(Math.max(...lifetimes)).toBeLessThan(HEADERS_TIMEOUT * 1.25 + 5000);
    expect(Math.min(...lifetimes)).toBeGreaterThanOrEqual(HEADERS_TIMEOUT - 50);
  });

  it('closes an idle keep-alive connection after the keep-alive time-out', async () => {
    const socket = net.connect(port, '127.0.0.1');
    const start = Date.now();
    let answered = 0;
    socket.on('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
    socket.on('data', () => (answered ||= Date.now()));
    const closed = await new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    expect(answered).toBeGreaterThan(0);
    expect(closed - answered).toBeLessThan(500 + 5000);
    expect(closed - start).toBeGreaterThanOrEqual(400);
  });

  it('caps the sockets it holds at TURNOUT_MAX_CONNECTIONS, closing the rest on arrival', async () => {
    const capped = await startTestApp({ connections: { maxConnections: 40 } });
    await capped.app.listen({ port: 0, host: '127.0.0.1' });
    const cappedPort = (capped.app.server.address() as { port: number }).port;
    let dropped = 0;
    capped.app.server.on('drop', () => dropped++);
    const sockets: net.Socket[] = [];
    const closedEarly: Promise<boolean>[] = [];
    for (let i = 0; i < 60; i++) {
      const socket = net.connect(cappedPort, '127.0.0.1').on('error', () => {});
      socket.resume();
      sockets.push(socket);
      closedEarly.push(new Promise((resolve) => {
        socket.on('close', () => resolve(true));
        setTimeout(() => resolve(false), 2000);
      }));
      await new Promise((resolve) => socket.on('connect', resolve));
    }
    const early = (await Promise.all(closedEarly)).filter(Boolean).length;
    expect(dropped).toBe(20);
    expect(early).toBe(20);
    for (const s of sockets) s.destroy();
    await capped.close();
  });
});

describe('a half-closed POST', () => {
  it('is answered when the client ends its side right after the body', async () => {
    const body = JSON.stringify({ LastName: 'Halfclosed' });
    const r = await rawRequest(
      port,
      `POST /api/v1/constituents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      { halfClose: true },
    );
    expect(r.status).toBe(201);
    expect(r.body.constituent.LastName).toBe('Halfclosed');
  });
});
