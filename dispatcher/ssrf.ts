import { promises as dns } from 'node:dns';
import net from 'node:net';

/**
 * Server-side request forgery guard: a webhook URL may only reach public addresses. Hosts are
 * judged by address, never by name, and the address judged is the one connected to (see
 * send.ts: the socket's lookup goes through `safeLookup`), so DNS rebinding between the check
 * and the connection gains nothing.
 */

// Separate lists: Node's BlockList matches IPv4 addresses against IPv4-mapped IPv6 rules too.
const blocked = new net.BlockList();
const blocked6 = new net.BlockList();
// IPv4 special-purpose ranges (IANA registry): "this network", private, CGNAT, loopback,
// link-local, IETF protocol assignments, documentation, 6to4 relay, benchmarking, multicast,
// reserved and broadcast.
for (const [a, p] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16],
  ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const)
  blocked.addSubnet(a, p, 'ipv4');
// IPv6: unspecified, loopback, IPv4-compatible and -mapped (judged by their IPv4 below as well),
// NAT64, discard, IETF protocol (incl. Teredo), documentation, 6to4, unique local, link-local,
// site-local, multicast.
for (const [a, p] of [
  ['::', 96], ['::ffff:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23],
  ['2001:db8::', 32], ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const)
  blocked6.addSubnet(a, p, 'ipv6');

/** The IPv4 inside an IPv4-mapped (::ffff:a.b.c.d) IPv6 address, if it is one. */
function mappedIPv4(address: string): string | null {
  const m = /^::ffff:(?:0{1,4}:)?(.+)$/i.exec(address);
  if (!m) return null;
  if (net.isIPv4(m[1])) return m[1];
  const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(m[1]);
  if (!hex) return null;
  const hi = parseInt(hex[1], 16);
  const lo = parseInt(hex[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** True when an IP address (either family) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const ip = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = net.isIP(ip);
  if (family === 4) return !blocked.check(ip, 'ipv4');
  if (family === 6) {
    const v4 = mappedIPv4(ip);
    if (v4 !== null) return false;
    return !blocked6.check(ip, 'ipv6');
  }
  return false;
}

export class UnsafeUrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsafeUrlError';
  }
}

export type Lookup = (hostname: string) => Promise<Array<{ address: string; family: number }>>;
export const systemLookup: Lookup = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export interface UrlPolicy {
  /** TURNOUT_WEBHOOK_ALLOW_INSECURE: http:// and non-public addresses allowed (development, tests). */
  allowInsecure: boolean;
  lookup?: Lookup;
}

/**
 * Parses and judges a URL without DNS. The WHATWG parser turns every IPv4 spelling (decimal
 * 2130706433, octal 0177.0.0.1, hex 0x7f.1, short 127.1) into dotted form, so one check
 * covers them all.
 */
export function parseEndpointUrl(raw: string, policy: UrlPolicy): URL {
  // The WHATWG parser drops surrounding spaces and any tab or line break, so the address kept
  // would not be the one sent: refuse spaces and control characters outright instead.
  if (/[\x00-\x20\x7f]/.test(raw)) throw new UnsafeUrlError('url must not hold spaces or control characters (percent-encode them, as %20).');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UnsafeUrlError('url must be an absolute https:// address, like https://example.org/hooks/turnout.');
  }
  if (url.protocol !== 'https:' && !(policy.allowInsecure && url.protocol === 'http:'))
    throw new UnsafeUrlError('url must use https://.');
  if (url.username || url.password) throw new UnsafeUrlError('url must not carry a user name or password.');
  if (url.port === '0') throw new UnsafeUrlError('url must not name port 0.');
  if (raw.length > 2000) throw new UnsafeUrlError('url must be at most 2000 characters.');
  if (policy.allowInsecure) return url;
  // A fully qualified name may end in a dot (`localhost.`, `intranet.`): judge it without it.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();
  if (net.isIP(host)) {
    if (!isPublicAddress(host)) throw new UnsafeUrlError(`url points at ${host}, which is not a public address.`);
  } else if (host === 'localhost' || host.endsWith('.localhost') || !host.includes('.')) {
    throw new UnsafeUrlError(`url host ${host} is not a public host name.`);
  }
  return url;
}

/**
 * The addresses a host name resolves to, all of which must be public. Used at endpoint creation
 * (a name that does not resolve yet is accepted: send time checks again) and on every connect.
 */
export async function resolvePublic(hostname: string, lookup: Lookup = systemLookup): Promise<Array<{ address: string; family: number }>> {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (net.isIP(host)) {
    if (!isPublicAddress(host)) throw new UnsafeUrlError(`${host} is not a public address.`);
    return [{ address: host, family: net.isIP(host) }];
  }
  const addresses = await lookup(host);
  if (addresses.length === 0) throw new UnsafeUrlError(`${host} does not resolve.`);
  const bad = addresses.find((a) => !isPublicAddress(a.address));
  if (bad) throw new UnsafeUrlError(`${host} resolves to ${bad.address}, which is not a public address.`);
  return addresses;
}

/** The check at endpoint creation and update: the URL's form, then where its name points now. */
export async function checkEndpointUrl(raw: string, policy: UrlPolicy): Promise<URL> {
  const url = parseEndpointUrl(raw, policy);
  if (policy.allowInsecure) return url;
  try {
    await resolvePublic(url.hostname, policy.lookup ?? systemLookup);
  } catch (err) {
    if (err instanceof UnsafeUrlError) throw err;
    // Not resolvable right now (no DNS, a name registered later): every send checks again.
  }
  return url;
}

/**
 * A `lookup` for net/tls sockets that only yields public addresses, so the address checked is
 * the one connected to, while Host and SNI keep the original name.
 */
export function safeLookup(lookup: Lookup = systemLookup) {
  return (hostname: string, options: { all?: boolean } | number, callback: (...args: any[]) => void) => {
    resolvePublic(hostname, lookup).then(
      (addresses) => {
        if (typeof options === 'object' && options?.all) callback(null, addresses);
        else callback(null, addresses[0].address, addresses[0].family);
      },
      (err) => callback(err),
    );
  };
}

/** The check commands run on a webhook URL: null when it may be used, else why not. */
export const endpointUrlCheck =
  (policy: UrlPolicy) =>
  async (url: string): Promise<string | null> => {
    try {
      await checkEndpointUrl(url, policy);
      return null;
    } catch (err) {
      if (err instanceof UnsafeUrlError) return err.message;
      throw err;
    }
  };
