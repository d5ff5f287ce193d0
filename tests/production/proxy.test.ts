import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangesQuery } from '../../api/schemas/changes.js';
import { loadConfig } from '../../runtime/config.js';
import { startTestApp, type TestApp } from '../support/app.js';

const nginx = readFileSync(new URL('../../deploy/nginx.conf', import.meta.url), 'utf8');
const compose = readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8');

describe('nginx in front of the API', () => {
  it('waits for an answer longer than the longest change-feed long poll', () => {
    const timeouts = [...nginx.matchAll(/^\s*proxy_read_timeout\s+(\d+)s;/gm)].map((m) => Number(m[1]));
    expect(timeouts.length).toBeGreaterThan(0);
    const longestWait = (ChangesQuery.properties as Record<string, { maximum?: number }>).wait.maximum!;
    expect(longestWait).toBe(30);
    // A margin for the page read after the wait and a loaded host.
    for (const t of timeouts) expect(t).toBeGreaterThanOrEqual(longestWait + 10);
  });

  it('is trusted for the client address in the compose file', () => {
    expect(compose).toMatch(/^\s*TURNOUT_TRUST_PROXY: \$\{TURNOUT_TRUST_PROXY:-uniquelocal\}\s*$/m);
    expect(nginx).toMatch(/proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;/);
  });
});

describe('TURNOUT_TRUST_PROXY', () => {
  it('takes addresses, CIDRs and the named private ranges, and refuses anything else clearly', () => {
    expect(loadConfig({}, []).trustProxy).toEqual([]);
    expect(loadConfig({ TURNOUT_TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,fd00::/8,uniquelocal' }, []).trustProxy).toEqual(['10.0.0.0/8', '192.168.1.7', 'fd00::/8', 'uniquelocal']);
    for (const bad of ['nginx', '10.0.0.0/33', '10.0.0/8', '1.2.3.4/8/1'])
      expect(() => loadConfig({ TURNOUT_TRUST_PROXY: bad }, []), bad).toThrow(`TURNOUT_TRUST_PROXY must list addresses or CIDRs (such as 10.0.0.0/8), or loopback, linklocal, uniquelocal, separated by commas (got "${bad}")`);
  });

  describe('failed-auth throttling behind a trusted proxy', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ trustProxy: ['10.0.0.0/8'], authFailuresPerMinute: 3 });
    });
    afterAll(() => t.close());
    const call = (from: string, forwardedFor?: string) =>
      t.app.inject({ method: 'GET', url: '/api/v1/constituents', remoteAddress: from, headers: { authorization: 'Bearer tko_wrong', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) } });

    it("counts each client behind the proxy apart: one client's bad keys do not throttle the others", async () => {
      for (let i = 0; i < 3; i++) expect((await call('10.0.0.2', '203.0.113.1')).statusCode).toBe(401);
      expect((await call('10.0.0.2', '203.0.113.1')).statusCode).toBe(429);
      // Another client through the same proxy is answered as ever.
      expect((await call('10.0.0.2', '203.0.113.2')).statusCode).toBe(401);
    });

    it('does not believe X-Forwarded-For from an address that is not a trusted proxy', async () => {
      for (let i = 0; i < 3; i++) expect((await call('198.51.100.9', `203.0.113.${10 + i}`)).statusCode).toBe(401);
      expect((await call('198.51.100.9', '203.0.113.99')).statusCode).toBe(429);
    });
  });
});
