import { Readable } from 'node:stream';
import { Agent } from 'undici';
import { CommandFailed, UsageError } from './errors.js';

/** A body already written as JSON: sent as this text, not serialised again. */
export class JsonText {
  constructor(readonly text: string) {}
}

export interface Answer {
  status: number;
  /** The parsed JSON body, or null when there was none or it was not JSON. */
  body: any;
}

/**
 * The admin surface of a running server (decisions.md §9), as the CLI uses it: `TURNOUT_URL` (the
 * server's origin) and `TURNOUT_ADMIN_TOKEN`. One keep-alive agent with `connections` sockets,
 * so an import's parallel sends reuse their connections.
 */
export class AdminClient {
  private readonly agent: Agent;
  private readonly auth: string;

  constructor(
    readonly origin: string,
    token: string,
    connections = 8,
  ) {
    this.agent = new Agent({ connections, keepAliveTimeout: 10_000 });
    this.auth = `Bearer ${token}`;
  }

  static fromEnv(env: NodeJS.ProcessEnv = process.env, connections?: number): AdminClient {
    const url = env.TURNOUT_URL;
    // As the server takes it: a secret file's last newline is not part of it (runtime/config.ts).
    const token = env.TURNOUT_ADMIN_TOKEN?.trim();
    if (!url) throw new UsageError('Set TURNOUT_URL to the server\'s origin, such as http://127.0.0.1:3000.');
    if (!token) throw new UsageError('Set TURNOUT_ADMIN_TOKEN to the server\'s admin token.');
    let origin: string;
    try {
      const u = new URL(url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      origin = u.origin;
    } catch {
      throw new UsageError(`TURNOUT_URL must be an http:// or https:// origin, such as http://127.0.0.1:3000 (got "${url}").`);
    }
    return new AdminClient(origin, token, connections);
  }

  /** One JSON call under /admin/v1; a refused connection is CommandFailed naming the origin. */
  async call(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs?: number): Promise<Answer> {
    const { status, text } = await this.callText(method, path, body, headers, timeoutMs);
    return { status, body: parseJson(text) };
  }

  /**
   * As call(), its body as text, for a caller that may not need it parsed (an import's batch).
   * `timeoutMs`: how long the answer may take, else CommandFailed saying so (undici's own limits,
   * five minutes, otherwise).
   */
  async callText(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs?: number): Promise<{ status: number; text: string }> {
    const r = await this.send(method, path, body, headers, timeoutMs);
    try {
      return { status: r.statusCode, text: await r.body.text() };
    } catch (err) {
      throw this.unreachable(err, timeoutMs);
    }
  }

  /**
   * A write whose 2xx body the caller does not need (an import's row): a 2xx answer's body is read
   * to its end and dropped unparsed, with `body: null`; any other is parsed as call() does.
   */
  async write(method: 'POST' | 'PATCH', path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const r = await this.send(method, path, body, headers);
    if (r.statusCode >= 200 && r.statusCode < 300) {
      await r.body.dump();
      return { status: r.statusCode, body: null };
    }
    return { status: r.statusCode, body: parseJson(await r.body.text()) };
  }

  /** A 2xx answer's body, else CommandFailed with the server's error message. */
  async expect(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<any> {
    const r = await this.call(method, path, body);
    if (r.status < 200 || r.status >= 300) throw new CommandFailed(describeError(r));
    return r.body;
  }

  /** A streamed GET (the export): the body as a Node stream, once the status is 2xx. */
  async stream(path: string): Promise<Readable> {
    const r = await this.send('GET', path);
    if (r.statusCode < 200 || r.statusCode >= 300) {
      throw new CommandFailed(describeError({ status: r.statusCode, body: parseJson(await r.body.text()) }));
    }
    return r.body;
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  private async send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, timeoutMs?: number) {
    try {
      // The agent's own request: undici's top-level request() parses the URL on every call.
      return await this.agent.request({
        origin: this.origin,
        path: `/admin/v1${path}`,
        method: method as 'GET',
        headers: { authorization: this.auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        body: body === undefined ? undefined : body instanceof JsonText ? body.text : JSON.stringify(body),
        ...(timeoutMs === undefined ? {} : { headersTimeout: timeoutMs, bodyTimeout: timeoutMs }),
      });
    } catch (err) {
      throw this.unreachable(err, timeoutMs);
    }
  }

  /** Why a call got no answer, as the operator can act on it. */
  private unreachable(err: unknown, timeoutMs: number | undefined): CommandFailed {
    const code = (err as { code?: string }).code;
    if (timeoutMs !== undefined && (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'))
      return new CommandFailed(`The server at ${this.origin} did not answer within ${Math.round(timeoutMs / 1000)} s. Is it overloaded or stopped, and is TURNOUT_URL right?`);
    return new CommandFailed(`Cannot reach the server at ${this.origin}: ${(err as Error).message}. Is it running, and is TURNOUT_URL right?`);
  }
}

/** The JSON of a body, or null when it is empty or not JSON. */
export function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return null;
  }
}

/** `HTTP 404 not_found: No such team.`: the server's own words. */
export function describeError(r: Answer): string {
  const e = r.body?.error;
  if (e?.code) return `HTTP ${r.status} ${e.code}${e.field ? ` (${e.field})` : ''}: ${e.message}`;
  return `HTTP ${r.status} from the server.`;
}
