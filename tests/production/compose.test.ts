import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

const compose = readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8');
const images = [...compose.matchAll(/^\s*image:\s*(\S+)\s*$/gm)].map((m) => m[1]).filter((i) => i !== 'turnout:local');

describe('the compose file', () => {
  it('names the four server images, and Prometheus and Grafana', () => {
    expect(images.map((i) => i.split(':')[0]).sort()).toEqual(['eventstore/eventstore', 'grafana/grafana', 'mongo', 'nats', 'nginx', 'prom/prometheus']);
  });

  it('pins every image to a patch version, so a rebuild never picks up a new server', () => {
    for (const image of images) expect(image, image).toMatch(/:v?\d+\.\d+\.\d+(-[a-z0-9.-]+)?$/);
  });

  it('starts Prometheus and Grafana only under the observability profile, with deploy/\'s configuration and the admin token as a secret', () => {
    const doc = parse(compose);
    for (const name of ['prometheus', 'grafana']) expect(doc.services[name].profiles, name).toEqual(['observability']);
    for (const name of ['api', 'projector', 'dispatcher', 'eventstore', 'mongo', 'nats', 'lb']) expect(doc.services[name].profiles, name).toBeUndefined();
    expect(doc.services.prometheus.volumes).toContain('./deploy/prometheus:/etc/prometheus:ro');
    expect(doc.services.prometheus.secrets).toEqual(['turnout_admin_token']);
    expect(doc.secrets.turnout_admin_token).toEqual({ environment: 'TURNOUT_ADMIN_TOKEN' });
    expect(doc.services.grafana.volumes).toContain('./deploy/grafana/turnout-dashboard.json:/var/lib/grafana/dashboards/turnout.json:ro');
    // The scrape configuration reads the token where the secret is mounted, and finds every role.
    const scrape = parse(readFileSync(new URL('../../deploy/prometheus/prometheus.yml', import.meta.url), 'utf8')).scrape_configs[0];
    expect(scrape.authorization.credentials_file).toBe('/run/secrets/turnout_admin_token');
    expect(scrape.dns_sd_configs.flatMap((c: { names: string[] }) => c.names).sort()).toEqual(['api', 'dispatcher', 'projector']);
    expect(scrape.dns_sd_configs.every((c: { port: number }) => c.port === 3000)).toBe(true);
  });

  it('gives every Turnout process the same admin token and main key, and refuses to start without either', () => {
    const env = parse(compose)['x-turnout'].environment;
    // The API seals webhook secrets with the main key and the dispatcher opens them (decisions.md §17).
    expect(env.TURNOUT_ADMIN_TOKEN).toMatch(/^\$\{TURNOUT_ADMIN_TOKEN:\?/);
    expect(env.TURNOUT_MAIN_KEY).toMatch(/^\$\{TURNOUT_MAIN_KEY:\?.*openssl rand -base64 32/);
  });

  it('uses an nginx whose upstream `resolve` parameter exists (open source nginx 1.27.3 and later)', () => {
    const nginx = images.find((i) => i.startsWith('nginx:'))!;
    const [major, minor, patch] = nginx.slice('nginx:'.length).split(/[.-]/).map(Number);
    expect(major * 1_000_000 + minor * 1000 + patch).toBeGreaterThanOrEqual(1_027_003);
  });
});
