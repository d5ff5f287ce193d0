import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Sealer } from '../eventlog/sealing.js';
import { privateFile, secureDataDir } from './private-files.js';

/**
 * The main key (decisions.md §2, §17): TURNOUT_MAIN_KEY (base64 of 32 bytes) where set, as a
 * production deployment does from its secret store; else generated on first start into
 * `<dataDir>/main-key`, mode 0600, apart from the log and the read models. It seals the webhook
 * signing secrets and wraps the constituents' data keys: losing it loses both.
 *
 * An in-memory data dir (tests) with no variable gets a fresh key per process.
 */
export function loadMainKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): { key: Buffer; source: string } {
  const given = env.TURNOUT_MAIN_KEY?.trim();
  if (given) return { key: decode(given, 'TURNOUT_MAIN_KEY'), source: 'TURNOUT_MAIN_KEY' };
  if (dataDir === ':memory:') return { key: randomBytes(Sealer.KEY_BYTES), source: 'generated for this in-memory process' };
  secureDataDir(dataDir);
  const file = path.resolve(dataDir, 'main-key');
  if (existsSync(file)) {
    privateFile(file);
    return { key: decode(readFileSync(file, 'utf8').trim(), file), source: file };
  }
  const key = randomBytes(Sealer.KEY_BYTES);
  // Written whole under a name of this process's, then linked into place: link() fails on an
  // existing name, so of two processes starting on one new data dir one key wins, and the other
  // never reads the file before its contents are there (as it could while 'wx' writes them).
  const draft = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(draft, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  try {
    linkSync(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return { key: decode(readFileSync(file, 'utf8').trim(), file), source: file };
  } finally {
    rmSync(draft, { force: true });
  }
  return { key, source: file };
}

function decode(text: string, from: string): Buffer {
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? Buffer.from(text, 'base64') : Buffer.alloc(0);
  if (key.length !== Sealer.KEY_BYTES) throw new Error(`${from} must be the base64 of ${Sealer.KEY_BYTES} bytes (openssl rand -base64 32)`);
  return key;
}
