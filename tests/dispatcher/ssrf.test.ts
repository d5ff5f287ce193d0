import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { checkEndpointUrl, isPublicAddress, parseEndpointUrl, UnsafeUrlError } from '../../dispatcher/ssrf.js';
import { Sender } from '../../dispatcher/send.js';

const strict = { allowInsecure: false };

describe('judging webhook addresses', () => {
  it.each([
    '127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1',
    '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a00:1',
  ])('refuses %s', (ip) => expect(isPublicAddress(ip)).toBe(false));

  it.each(['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111'])('accepts %s', (ip) => expect(isPublicAddress(ip)).toBe(true));

  it.each([
    'https://127.0.0.1/hook', 'https://2130706433/hook', 'https://0177.0.0.1/hook', 'https://0x7f.1/hook', 'https://127.1/hook',
    'https://[::ffff:127.0.0.1]/hook', 'https://[::1]/hook', 'https://localhost/hook', 'https://api.localhost/hook', 'https://169.254.169.254/latest',
    'http://example.org/hook', 'ftp://example.org/', 'not a url', 'https://user:pw@example.org/',
    // Fully qualified spellings: a trailing dot names the same host.
    'https://localhost./hook', 'https://LOCALHOST../hook', 'https://api.localhost./hook', 'https://intranet./hook', 'https://./hook',
    // What the parser would silently drop or keep (surrounding spaces, tabs, line breaks, control
    // characters), and port 0.
    ' https://example.org/hook ', 'https://exa\tmple.org/hook', 'https://example.org/hook\n\u0007', 'https://example.org/hook\u0000', 'https://example.org:0/hook',
  ])('refuses the URL %j', (url) => expect(() => parseEndpointUrl(url, strict)).toThrow(UnsafeUrlError));

  it('refuses spaces and control characters in insecure mode too', () => {
    expect(() => parseEndpointUrl('http://127.0.0.1:9/x\t', { allowInsecure: true })).toThrow('url must not hold spaces or control characters');
  });

  it('refuses a name that resolves to a private address, and accepts one that resolves to a public one', async () => {
    const lookup = async (h: string) => [{ address: h === 'evil.example' ? '10.0.0.5' : '93.184.216.34', family: 4 }];
    await expect(checkEndpointUrl('https://evil.example/hook', { ...strict, lookup })).rejects.toThrow(/10\.0\.0\.5/);
    await expect(checkEndpointUrl('https://good.example/hook', { ...strict, lookup })).resolves.toBeInstanceOf(URL);
  });

  it('lets insecure mode reach http://127.0.0.1 (local development)', () => {
    expect(parseEndpointUrl('http://127.0.0.1:9/x', { allowInsecure: true }).hostname).toBe('127.0.0.1');
  });
});

describe('checking again at send time', () => {
  it('connects only to the checked address: a name that now resolves to loopback is refused without a request', async () => {
    let hits = 0;
    const server = http.createServer((_q, s) => {
      hits++;
      s.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as import('node:net').AddressInfo).port;
    // The sender would use http only in insecure mode, so judge the guard at the socket: an https
    // URL whose name rebinds to 127.0.0.1 must fail in the lookup, before any connection.
    const sender = new Sender({ timeoutMs: 1000, allowInsecure: false, lookup: async () => [{ address: '127.0.0.1', family: 4 }] });
    const r = await sender.send(`https://rebind.example:${port}/hook`, '{}', {});
    expect(r.ok).toBe(false);
    expect(r.error).toMatch(/not a public address/);
    expect(hits).toBe(0);
    const literal = await sender.send(`https://127.0.0.1:${port}/hook`, '{}', {});
    expect(literal.error).toMatch(/not a public address/);
    sender.close();
    server.close();
  });
});
