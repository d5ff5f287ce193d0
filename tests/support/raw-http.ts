import net from 'node:net';

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
  text: string;
}

/** Parses the first HTTP/1.1 response in what a socket received. */
export function parseAnswer(text: string): RawAnswer {
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const [statusLine, ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  let raw = split < 0 ? '' : text.slice(split + 4);
  if (headers['content-length']) raw = raw.slice(0, Number(headers['content-length']));
  let body: unknown = raw;
  try {
    body = JSON.parse(raw);
  } catch {
    /* not JSON */
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body, text };
}

/**
 * Sends bytes exactly as given on a fresh loopback socket and collects the answer until the
 * server closes or `Connection: close`-less answers stop arriving (`settleMs` after the last byte).
 * `halfClose` ends the client's side right after sending (a half-closed request).
 */
export function rawRequest(port: number, bytes: string | Buffer, opts: { halfClose?: boolean; settleMs?: number; timeoutMs?: number } = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let got = '';
    let settle: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(settle);
      clearTimeout(limit);
      socket.destroy();
      if (!got) reject(new Error('no answer'));
      else resolve(parseAnswer(got));
    };
    const limit = setTimeout(finish, opts.timeoutMs ?? 5000);
    socket.on('connect', () => {
      socket.write(bytes);
      if (opts.halfClose) socket.end();
    });
    socket.on('data', (d) => {
      got += d.toString('latin1');
      clearTimeout(settle);
      settle = setTimeout(finish, opts.settleMs ?? 300);
    });
    socket.on('error', () => finish());
    socket.on('close', finish);
  });
}
