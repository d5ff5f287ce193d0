import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The OTLP/HTTP endpoint of the observability bench (observability.ts), a process of its own as a
 * collector is in life: it takes every export and keeps nothing, and its work (reading some
 * hundreds of kilobytes an export) runs neither on the server's event loop nor on its CPU clock.
 * A collector's cost is not the service's. Forked; it answers `{ port }` once listening, then
 * `{ exports }` to each `'count'`, and exits on `'close'`.
 */
let exports = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    exports++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('message', (m: 'count' | 'close') => {
  if (m === 'count') process.send!({ exports });
  else server.close(() => process.exit(0));
});
