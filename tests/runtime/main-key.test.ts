import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Sealer } from '../../eventlog/sealing.js';
import { loadMainKey } from '../../runtime/main-key.js';
import { tempDirs } from '../support/temp-dirs.js';

const tempDir = tempDirs('turnout-mainkey-');

describe('Sealer (AES-256-GCM)', () => {
  const sealer = new Sealer(Sealer.newKey());

  it('opens what it sealed, for the same associated data only', () => {
    const sealed = sealer.sealText('whsec_secret', 'endpoint-1');
    expect(sealed.startsWith(Sealer.TEXT_PREFIX)).toBe(true);
    expect(sealed).not.toContain('whsec_secret');
    expect(sealer.openText(sealed, 'endpoint-1')).toBe('whsec_secret');
    expect(() => sealer.openText(sealed, 'endpoint-2')).toThrow();
  });

  it('seals the same text differently each time, and refuses an altered or foreign value', () => {
    const a = sealer.sealBytes(Buffer.from('x'));
    expect(a.equals(sealer.sealBytes(Buffer.from('x')))).toBe(false);
    const altered = Buffer.from(a);
    altered[altered.length - 1] ^= 1;
    expect(() => sealer.openBytes(altered)).toThrow();
    expect(() => new Sealer(Sealer.newKey()).openBytes(a)).toThrow();
    expect(() => sealer.openText('plain')).toThrow('not a sealed text');
    expect(Sealer.isSealedText('plain')).toBe(false);
  });

  it('takes only a 32-byte key', () => {
    expect(() => new Sealer(Buffer.alloc(16))).toThrow('32 bytes');
  });
});

describe('loadMainKey', () => {
  it('generates <dataDir>/main-key once, mode 0600, and reads it back', () => {
    const dir = tempDir();
    const first = loadMainKey(dir, {});
    const file = path.join(dir, 'main-key');
    expect(first.source).toBe(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64').equals(first.key)).toBe(true);
    expect(loadMainKey(dir, {}).key.equals(first.key)).toBe(true);
    // The key is written aside and linked into place: nothing else is left in the data dir.
    expect(readdirSync(dir)).toEqual(['main-key']);
  });

  it('prefers TURNOUT_MAIN_KEY and refuses one that is not 32 bytes of base64', () => {
    const dir = tempDir();
    const key = Sealer.newKey();
    expect(loadMainKey(dir, { TURNOUT_MAIN_KEY: key.toString('base64') }).key.equals(key)).toBe(true);
    expect(() => loadMainKey(dir, { TURNOUT_MAIN_KEY: 'c2hvcnQ=' })).toThrow('TURNOUT_MAIN_KEY must be the base64 of 32 bytes');
    writeFileSync(path.join(dir, 'main-key'), 'not a key\n');
    expect(() => loadMainKey(dir, {})).toThrow('main-key must be the base64');
  });
});
