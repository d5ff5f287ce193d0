import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../runtime/config.js';
import { http, type TurnoutProcess, useBuiltService } from '../support/process.js';

/** The real server's log: its level (LOG_LEVEL), and a shutdown that survives a closed stdout. */
const service = useBuiltService('turnout-logging-');
const freshDir = () => service.freshDir();

/** A production-like process (NODE_ENV=production turns the request logger on). */
const start = (env: Record<string, string> = {}) => service.start({ env: { NODE_ENV: 'production', TURNOUT_DATA_DIR: freshDir(), ...env } });

/** A team and a read_write key on a running process. */
async function keyOn(p: TurnoutProcess): Promise<string> {
  const admin = http(`${p.url}/admin/v1`, 'test-admin-token');
  const team = (await admin.post('/teams', { name: 'Logs' })).body.team;
  return (await admin.post(`/teams/${team.id}/api-keys`, { name: 'K', scope: 'read_write' })).body.key;
}

/**
 * Two processes for the whole file (a start costs seconds on a loaded machine): one at
 * LOG_LEVEL=info, whose pipes are then closed before SIGTERM, and one at the default level on the
 * same data dir. The tests run in order on them.
 */
const dir = freshDir();
let key: string;
let info: TurnoutProcess;
let quiet: TurnoutProcess;
let made: { status: number; body: any };

describe('the log level', () => {
  it('logs every request at LOG_LEVEL=info', async () => {
    info = await start({ LOG_LEVEL: 'info', TURNOUT_DATA_DIR: dir, TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0' });
    key = await keyOn(info);
    expect((await http(`${info.url}/api/v1`, key).get('/constituents')).status).toBe(200);
    await expect.poll(() => info.output()).toContain('request completed');
    expect(info.output()).toContain('/api/v1/constituents');
  }, 60_000);

  it('is read from LOG_LEVEL, and one it does not know is refused, naming the levels', () => {
    expect(loadConfig({}, []).logLevel).toBe('warn');
    expect(loadConfig({ LOG_LEVEL: 'info' }, []).logLevel).toBe('info');
    expect(() => loadConfig({ LOG_LEVEL: 'loud' }, [])).toThrow('LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")');
  });
});

describe('SIGTERM with stdout and stderr closed pipes', () => {
  it('shuts down cleanly (exit 0) and keeps what it acknowledged', async () => {
    const exit = new Promise<[number | null, string | null]>((resolve) => info.process.once('exit', (code, signal) => resolve([code, signal])));
    // The reader goes away: every later write to stdout or stderr fails with EPIPE.
    info.process.stdout!.destroy();
    info.process.stderr!.destroy();
    const api = http(`${info.url}/api/v1`, key);
    made = await api.post('/constituents', { LastName: 'Piped' });
    expect(made.status).toBe(201);
    for (let i = 0; i < 20; i++) expect((await api.get('/constituents')).status).toBe(200);
    await info.stop();
    expect(await exit).toEqual([0, null]);

    quiet = await start({ TURNOUT_DATA_DIR: dir });
    const read = await http(`${quiet.url}/api/v1`, key).get(`/constituents/${made.body.constituent.PkConstituent}`);
    expect(read.status).toBe(200);
    expect(read.body.constituent.LastName).toBe('Piped');
  }, 90_000);
});

describe('the default log level', () => {
  it('is quiet: start-up lines, no line per request', async () => {
    expect((await http(`${quiet.url}/api/v1`, key).get('/constituents')).status).toBe(200);
    await quiet.stop();
    expect(quiet.output()).toContain('listening on');
    expect(quiet.output()).not.toContain('request completed');
    expect(quiet.output()).not.toContain('incoming request');
  }, 60_000);
});
