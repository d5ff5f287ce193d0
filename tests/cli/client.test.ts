import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { AdminClient } from '../../cli/client.js';
import { CommandFailed } from '../../cli/errors.js';

/**
 * The CLI's calls to a server that takes its connection and then says nothing (decisions.md §13:
 * a clear message and exit 1, not a silence of undici's five minutes): `turnout import` gives its
 * first look at the server a time-out.
 */
const sockets = new Set<net.Socket>();
const silent = net.createServer((socket) => {
  sockets.add(socket);
  // Headers only, for the body's time-out; nothing at all, for the headers'.
  socket.once('data', (d) => {
    if (d.toString().includes('/half')) socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{');
  });
});
const port = new Promise<number>((resolve) => silent.listen(0, '127.0.0.1', () => resolve((silent.address() as net.AddressInfo).port)));
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

describe('a call given a time-out', () => {
  it('fails with the time it waited, naming the server, when no answer comes or the answer stops', async () => {
    const client = AdminClient.fromEnv({ TURNOUT_URL: `http://127.0.0.1:${await port}`, TURNOUT_ADMIN_TOKEN: 't' });
    try {
      for (const path of ['/teams/1/activity', '/half']) {
        const started = Date.now();
        const failed = await client.call('GET', path, undefined, {}, 1_000).then(
          () => null,
          (err: unknown) => err,
        );
        expect(failed, path).toBeInstanceOf(CommandFailed);
        expect((failed as Error).message).toBe(`The server at http://127.0.0.1:${await port} did not answer within 1 s. Is it overloaded or stopped, and is TURNOUT_URL right?`);
        expect(Date.now() - started).toBeLessThan(10_000);
      }
    } finally {
      await client.close().catch(() => undefined);
    }
  });
});
