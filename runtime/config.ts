import { isIP } from 'node:net';
import type { RetryPolicy } from '../dispatcher/retry.js';
import type { RetryPolicy as BackoffPolicy } from '../eventlog/backoff.js';

/** Configuration from the environment (decisions.md 2). Invalid values stop the process with a clear message. */
export type Role = 'all' | 'api' | 'projector' | 'dispatcher';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  adminToken: string | undefined;
  eventStoreUrl: string | undefined;
  mongoUrl: string | undefined;
  natsUrl: string | undefined;
  smtpUrl: string | undefined;
  /** Sender of notification mail. */
  mailFrom: string | undefined;
  rateLimitPerSecond: number;
  rateLimitPerMinute: number;
  /** Failed authentications per address in a rolling minute before that address is answered 429. */
  authFailuresPerMinute: number;
  connections: ConnectionLimits;
  webhook: RetryPolicy & {
    allowInsecure: boolean;
    timeoutMs: number;
  };
  /** Hours of nothing but failed attempts after which an endpoint is disabled (decisions.md 12). */
  webhookDisableAfterHours: number;
  /** Days a delivery attempt stays in the delivery log after its last write. */
  deliveryLogDays: number;
  role: Role;
  /** How long a request arriving while the read models catch up after a start waits before a 503 (api/read-gate.ts). */
  startWaitMs: number;
  /** LOG_LEVEL: `warn` by default (start-up, warnings, errors); `info` logs every request. */
  logLevel: LogLevel;
  /**
   * TURNOUT_TRUST_PROXY (decisions.md §2): addresses or CIDRs of the proxies whose
   * X-Forwarded-For names the client (failed-auth throttling, logs); empty: none is trusted.
   */
  trustProxy: string[];
  /** The delay between a failed erasure's attempts (runtime/erasure-pending.ts, eventlog/backoff.ts); not from the environment: 1 s doubling to 60 s, shorter in tests. */
  erasureRetry?: BackoffPolicy;
}

/** pino's levels, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

function logLevel(env: NodeJS.ProcessEnv): LogLevel {
  const raw = str(env, 'LOG_LEVEL') ?? 'warn';
  if (!(LOG_LEVELS as readonly string[]).includes(raw)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${raw}")`);
  return raw as LogLevel;
}

/**
 * How long the HTTP server waits for a client, and how many sockets it holds (idle sockets
 * held too long exhaust the file descriptors). Node checks the header and request
 * time-outs on a timer; it runs every quarter of the shorter one.
 */
export interface ConnectionLimits {
  /** A request's headers must arrive within this (from the connection or the previous response). */
  headersTimeoutMs: number;
  /** The whole request, headers and body, must arrive within this. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** A socket with no traffic at all, in either direction, is closed after this. */
  idleTimeoutMs: number;
  /** Sockets beyond this are closed on arrival; keep it under the file-descriptor limit (ulimit -n). */
  maxConnections: number;
}

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`${name} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`} (got "${raw}")`);
  return n;
}

const str = (env: NodeJS.ProcessEnv, name: string) => (env[name] === '' ? undefined : env[name]);

/** A switch that is `1` to turn on (decisions.md §2); unset, empty or `0` is off, anything else a mistake said at start. */
function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0') return false;
  if (raw === '1') return true;
  throw new Error(`${name} must be 1 (on) or 0 (off) (got "${raw}")`);
}

/**
 * The admin bearer token: surrounding white space (a secret file's last newline) is not part of
 * it, and one with white space inside could never be sent in an Authorization header.
 */
function adminToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.TURNOUT_ADMIN_TOKEN;
  if (raw === undefined) return undefined;
  const token = raw.trim();
  if (raw !== '' && token === '') throw new Error('TURNOUT_ADMIN_TOKEN is only white space: set a token, or leave it unset to have one generated');
  if (/\s/.test(token)) throw new Error('TURNOUT_ADMIN_TOKEN must not contain white space (it is sent as "Authorization: Bearer <token>")');
  return token === '' ? undefined : token;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = process.argv.slice(2)): Config {
  const roleArg = argv.find((a) => a.startsWith('--role='))?.slice(7) ?? (argv.includes('--role') ? argv[argv.indexOf('--role') + 1] : undefined);
  const role = (roleArg ?? env.TURNOUT_ROLE ?? 'all') as Role;
  if (!['all', 'api', 'projector', 'dispatcher'].includes(role)) throw new Error(`--role must be api, projector, dispatcher or all (got "${role}")`);
  const url = (name: string, schemes: string[]) => {
    const v = str(env, name);
    if (v && !schemes.some((s) => v.startsWith(s))) throw new Error(`${name} must start with ${schemes.join(' or ')}`);
    return v;
  };
  return {
    port: int(env, 'PORT', 3000, 0, 65_535),
    host: str(env, 'HOST') ?? '127.0.0.1',
    dataDir: str(env, 'TURNOUT_DATA_DIR') ?? './data',
    adminToken: adminToken(env),
    eventStoreUrl: url('TURNOUT_EVENTSTORE_URL', ['esdb://', 'esdb+discover://']),
    mongoUrl: url('TURNOUT_MONGO_URL', ['mongodb://', 'mongodb+srv://']),
    natsUrl: url('TURNOUT_NATS_URL', ['nats://', 'tls://']),
    smtpUrl: url('TURNOUT_SMTP_URL', ['smtp://', 'smtps://']),
    mailFrom: str(env, 'TURNOUT_MAIL_FROM'),
    rateLimitPerSecond: int(env, 'TURNOUT_RATE_LIMIT_PER_SECOND', 15),
    rateLimitPerMinute: int(env, 'TURNOUT_RATE_LIMIT_PER_MINUTE', 600),
    authFailuresPerMinute: int(env, 'TURNOUT_AUTH_FAILURES_PER_MINUTE', 60),
    connections: connectionLimits(env),
    webhook: {
      allowInsecure: flag(env, 'TURNOUT_WEBHOOK_ALLOW_INSECURE'),
      retryBaseMs: int(env, 'TURNOUT_WEBHOOK_RETRY_BASE_MS', 30_000, 1),
      retryMaxMs: int(env, 'TURNOUT_WEBHOOK_RETRY_MAX_MS', 3_600_000, 1),
      maxAttempts: int(env, 'TURNOUT_WEBHOOK_MAX_ATTEMPTS', 9, 1),
      timeoutMs: int(env, 'TURNOUT_WEBHOOK_TIMEOUT_MS', 10_000, 1),
    },
    webhookDisableAfterHours: int(env, 'TURNOUT_WEBHOOK_DISABLE_AFTER_HOURS', 120, 1),
    deliveryLogDays: int(env, 'TURNOUT_DELIVERY_LOG_DAYS', 30, 1),
    role,
    startWaitMs: int(env, 'TURNOUT_START_WAIT_MS', 10_000),
    logLevel: logLevel(env),
    trustProxy: trustProxy(env),
  };
}

/** The names proxy-addr knows for whole private ranges, beside addresses and CIDRs. */
const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

function trustProxy(env: NodeJS.ProcessEnv): string[] {
  const list = (str(env, 'TURNOUT_TRUST_PROXY') ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  for (const item of list) {
    if (PROXY_RANGES.includes(item)) continue;
    const [address, bits, ...rest] = item.split('/');
    const family = isIP(address);
    const prefixOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!family || !prefixOk || rest.length)
      throw new Error(`TURNOUT_TRUST_PROXY must list addresses or CIDRs (such as 10.0.0.0/8), or ${PROXY_RANGES.join(', ')}, separated by commas (got "${item}")`);
  }
  return list;
}

function connectionLimits(env: NodeJS.ProcessEnv): ConnectionLimits {
  const limits = {
    headersTimeoutMs: int(env, 'TURNOUT_HEADERS_TIMEOUT_MS', 10_000, 1),
    requestTimeoutMs: int(env, 'TURNOUT_REQUEST_TIMEOUT_MS', 30_000, 1),
    keepAliveTimeoutMs: int(env, 'TURNOUT_KEEP_ALIVE_TIMEOUT_MS', 10_000, 1),
    idleTimeoutMs: int(env, 'TURNOUT_IDLE_TIMEOUT_MS', 60_000, 1),
    maxConnections: int(env, 'TURNOUT_MAX_CONNECTIONS', 4096, 1),
  };
  // Node refuses a header time-out longer than the request's.
  if (limits.headersTimeoutMs > limits.requestTimeoutMs)
    throw new Error(`TURNOUT_HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not be longer than TURNOUT_REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs})`);
  return limits;
}

/** A configuration for tests: embedded everything, limits off unless asked. */
export type TestConfigOverrides = Partial<Omit<Config, 'connections'>> & { connections?: Partial<ConnectionLimits> };

export function testConfig(overrides: TestConfigOverrides = {}): Config {
  const base = loadConfig({ TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0' }, []);
  return { ...base, dataDir: ':memory:', adminToken: 'test-admin-token', ...overrides, connections: { ...base.connections, ...overrides.connections }, webhook: { ...base.webhook, allowInsecure: true, ...overrides.webhook } };
}
