import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const compose = readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8');
const images = [...compose.matchAll(/^\s*image:\s*(\S+)\s*$/gm)].map((m) => m[1]).filter((i) => i !== 'turnout:local');

describe('the compose file', () => {
  it('names the four server images', () => {
    expect(images.map((i) => i.split(':')[0]).sort()).toEqual(['eventstore/eventstore', 'mongo', 'nats', 'nginx']);
  });

  it('pins every image to a patch version, so a rebuild never picks up a new server', () => {
    for (const image of images) expect(image, image).toMatch(/:\d+\.\d+\.\d+(-[a-z0-9.-]+)?$/);
  });

  it('uses an nginx whose upstream `resolve` parameter exists (open source nginx 1.27.3 and later)', () => {
    const nginx = images.find((i) => i.startsWith('nginx:'))!;
    const [major, minor, patch] = nginx.slice('nginx:'.length).split(/[.-]/).map(Number);
    expect(major * 1_000_000 + minor * 1000 + patch).toBeGreaterThanOrEqual(1_027_003);
  });
});
