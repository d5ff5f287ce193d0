import { writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, startCli } from '../support/cli.js';
import { http, type TurnoutProcess, useBuiltService } from '../support/process.js';

/**
 * The `turnout` command line (decisions.md §13) as operators run it: the built CLI in a child
 * process against a real server. The interrupted import and rebuild have their own files.
 */
const service = useBuiltService('turnout-cli-');
const TOKEN = 'test-admin-token';
let server: TurnoutProcess;
let cli: (args: string[], env?: Record<string, string | undefined>) => ReturnType<typeof runCli>;

beforeAll(async () => {
  server = await service.start({ env: { TURNOUT_DATA_DIR: service.freshDir(), TURNOUT_RATE_LIMIT_PER_SECOND: '0', TURNOUT_RATE_LIMIT_PER_MINUTE: '0' } });
  const main = service.built('cli/main.js');
  cli = (args, env = {}) => runCli(main, args, { TURNOUT_URL: server.url, TURNOUT_ADMIN_TOKEN: TOKEN, ...env });
}, 120_000);

/**
 * A team and a read_write key, made through the admin API: `turnout teams create` and `keys create`
 * have their own test, and two CLI processes more for each test's team took seconds on a loaded
 * machine. `api` calls /api/v1 with the key.
 */
async function team() {
  const admin = http(`${server.url}/admin/v1`, TOKEN);
  const t = await admin.post('/teams', { name: `CLI ${Math.random()}` });
  expect(t.status).toBe(201);
  const id = t.body.team.id as number;
  const k = await admin.post(`/teams/${id}/api-keys`, { name: 'Checker', scope: 'read_write' });
  expect(k.status).toBe(201);
  return { id, api: http(`${server.url}/api/v1`, k.body.key) };
}

function file(name: string, text: string): string {
  const f = path.join(service.freshDir(), name);
  writeFileSync(f, text);
  return f;
}

describe('turnout --help and bad usage', () => {
  it('prints usage for every command on stdout and exits 0', async () => {
    for (const args of [[], ['teams'], ['teams', 'create'], ['keys', 'create'], ['import'], ['export'], ['replay'], ['rebuild'], ['erase']]) {
      const r = await cli([...args, '--help'], { TURNOUT_URL: undefined, TURNOUT_ADMIN_TOKEN: undefined });
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^Usage: turnout/);
      expect(r.stdout).toContain('Exit status: 0 done, 1 failed, 2 bad usage.');
    }
  });

  it('stops quietly when the reader of its stdout goes away (`| head`), with no stack trace', async () => {
    const run = startCli(service.built('cli/main.js'), ['import', '--help']);
    run.child.stdout!.destroy(); // the reader is gone before the first line
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toBe('');
  });

  it('exits 2 with the reason on stderr for an unknown command, a missing or malformed option, or no server named', async () => {
    const cases: Array<[string[], Record<string, string | undefined>, RegExp]> = [
      [[], {}, /Usage: turnout/],
      [['bogus'], {}, /unknown command 'bogus'/],
      [['keys', 'create', '--name', 'x'], {}, /required option '--team <id>' not specified/],
      [['keys', 'create', '--team', 'x1', '--name', 'x'], {}, /'x1' is invalid/],
      [['keys', 'create', '--team', '1', '--name', 'x', '--scope', 'admin'], {}, /Allowed choices are read_write, read_only/],
      [['import', 'rows.csv', '--team', '1', '--resource', 'donations'], {}, /Allowed choices are constituents/],
      [['import', 'rows.xlsx', '--team', '1'], {}, /reads \.csv or \.ndjson files/],
      [['rebuild', '--prepare', '--drop-unused'], {}, /option '--drop-unused' cannot be used with option '--prepare'/],
      [['teams', 'create', '--name', 'x'], { TURNOUT_URL: undefined }, /Set TURNOUT_URL/],
      [['teams', 'create', '--name', 'x'], { TURNOUT_ADMIN_TOKEN: undefined }, /Set TURNOUT_ADMIN_TOKEN/],
      [['teams', 'create', '--name', 'x'], { TURNOUT_URL: 'ftp://host' }, /TURNOUT_URL must be an http/],
    ];
    for (const [args, env, message] of cases) {
      const r = await cli(args, env);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
  });

  it('exits 1 with the server\'s words when the server refuses (a wrong token, an unknown team)', async () => {
    const wrong = await cli(['teams', 'create', '--name', 'x'], { TURNOUT_ADMIN_TOKEN: 'nope' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/HTTP 401 unauthorized/);
    const unknown = await cli(['keys', 'create', '--team', '999999', '--name', 'x']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/HTTP 404 not_found/);
  });

  it('exits 1 with the reason and no stack trace when a server drops the connection mid-answer, or a store\'s URL is malformed (after a review of §13)', async () => {
    // Headers and part of a body, then the connection dropped (a server that crashed mid-answer).
    const dropping = net.createServer((socket) => {
      socket.once('data', () => {
        socket.write('HTTP/1.1 201 Created\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"team":');
        setTimeout(() => socket.destroy(), 50);
      });
    });
    const port = await new Promise<number>((resolve) => dropping.listen(0, '127.0.0.1', () => resolve((dropping.address() as net.AddressInfo).port)));
    try {
      const cut = await cli(['teams', 'create', '--name', 'x'], { TURNOUT_URL: `http://127.0.0.1:${port}` });
      expect(cut.code).toBe(1);
      expect(cut.stderr).toMatch(/^turnout: .*other side closed/m);
      expect(cut.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await new Promise<void>((resolve) => dropping.close(() => resolve()));
    }
    const malformed = await cli(['rebuild', '--drop-unused'], { TURNOUT_MONGO_URL: 'not-a-mongo-url' });
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/^turnout: /m);
    expect(malformed.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('turnout teams create and keys create', () => {
  it('prints {"team": ...}, and the key alone on the last line, which then works on /api/v1', async () => {
    const t = await cli(['teams', 'create', '--name', 'Riverside']);
    expect(JSON.parse(t.stdout)).toEqual({ team: expect.objectContaining({ id: expect.any(Number), name: 'Riverside' }) });
    const id = JSON.parse(t.stdout).team.id;
    const k = await cli(['keys', 'create', '--team', String(id), '--name', 'Reader', '--scope', 'read_only']);
    const lines = k.stdout.trim().split('\n');
    expect(JSON.parse(lines[0]).apiKey).toMatchObject({ name: 'Reader', scope: 'read_only' });
    expect(lines.at(-1)).toMatch(/^tko_\S+$/);
    const api = http(`${server.url}/api/v1`, lines.at(-1));
    expect((await api.get('/constituents')).status).toBe(200);
    expect((await api.post('/constituents', { LastName: 'X' })).status).toBe(403);
  });
});

describe('turnout import', () => {
  const CSV = [
    'FirstName,LastName,MailingZipCode,Phone1,IsEmailOk,FkConstituentType,Email1',
    'Ada,Lovelace,02134,(555) 867-5309,true,1,ada@example.org',
    'Bob,Ray,02135,12,TRUE,1,',
    ',,,,,,',
    'Acme,,,,,3,',
    '"Smith, Jo",Smith,,,yes,x,bad',
    'Grace,Hopper,00501,555.867.5310,FALSE,1,grace@example.org',
  ].join('\n');

  it('--dry-run reports each invalid row as "row N: FIELD: CODE: message", then the counts, and sends nothing', async () => {
    const { id, api } = await team();
    const r = await cli(['import', file('people.csv', CSV), '--team', String(id), '--dry-run']);
    expect(r.stdout.split('\n')).toEqual([
      'row 2: Phone1: invalid_field: Phone1 must be a 10-digit US phone number, like 555-867-5309.',
      'row 4: ConstituentName: missing_field: Households (2) and organizations (3) need ConstituentName.',
      'row 5: FkConstituentType: invalid_field: FkConstituentType must be a whole number.',
      '2 valid, 3 invalid',
      '',
    ]);
    expect(r.code).toBe(1);
    expect((await api.get('/constituents')).body.total).toBe(0);
  });

  it('types each CSV cell by its field: text stays text (02134, phone digits), booleans and numbers parsed', async () => {
    const { id, api } = await team();
    const r = await cli(['import', file('people.csv', CSV), '--team', String(id)]);
    expect(r.stdout.split('\n').slice(-2)).toEqual(['2 written, 0 failed', '']);
    expect(r.code).toBe(1); // three rows were invalid
    const ada = (await api.get('/constituents?email=ada@example.org')).body.constituents[0];
    expect(ada).toMatchObject({ MailingZipCode: '02134', Phone1: '5558675309', IsEmailOk: true, FkConstituentType: 1 });
    const grace = (await api.get('/constituents?email=grace@example.org')).body.constituents[0];
    expect(grace).toMatchObject({ MailingZipCode: '00501', Phone1: '5558675310', IsEmailOk: false });
  });

  it("reads a quote inside a cell that does not begin with one as the cell's text, not as an error that stops the file", async () => {
    const { id, api } = await team();
    const f = file('quotes.csv', ['FirstName,LastName,ConstituentDescription', 'A,B,ok', `C,D,is 5'10" tall`, '"E"x,F,"says ""hi"", then, leaves"', ''].join('\n'));
    const r = await cli(['import', f, '--team', String(id)]);
    expect([r.code, r.stdout]).toEqual([0, '3 valid, 0 invalid\n3 written, 0 failed\n']);
    const people = (await api.get('/constituents')).body.constituents as Array<Record<string, unknown>>;
    expect(people.map((c) => [c.FirstName, c.ConstituentDescription])).toEqual([
      ['A', 'ok'],
      ['C', `is 5'10" tall`],
      ['"E"x', 'says "hi", then, leaves'],
    ]);
    const open = await cli(['import', file('open.csv', 'FirstName,LastName\n"A,B\n'), '--team', String(id), '--dry-run']);
    expect(open.code).toBe(1);
    expect(open.stderr).toMatch(/open\.csv: not readable as CSV: Quote Not Closed/);
  });

  it('refuses a column headed __proto__ by name, as any unknown field, rather than dropping it', async () => {
    const { id, api } = await team();
    const r = await cli(['import', file('proto.csv', 'FirstName,__proto__,LastName\nA,x,B\n'), '--team', String(id)]);
    expect(r.stdout).toBe('row 1: __proto__: unknown_field: "__proto__" is not a recognised body field here; remove it.\n0 valid, 1 invalid\n');
    expect(r.code).toBe(1);
    expect((await api.get('/constituents')).body.total).toBe(0);
  });

  it('exits 0 when every row is valid and written, and a re-run of the same file writes nothing twice', async () => {
    const { id, api } = await team();
    const f = file('events.ndjson', ['{"EventTitle":"Town hall","StartTime":"6 PM"}', '', '{"EventTitle":"Canvass","MaxGuests":40}', ''].join('\n'));
    const first = await cli(['import', f, '--team', String(id), '--resource', 'events']);
    expect([first.code, first.stdout]).toEqual([0, '2 valid, 0 invalid\n2 written, 0 failed\n']);
    const again = await cli(['import', f, '--team', String(id), '--resource', 'events']);
    expect([again.code, again.stdout]).toEqual([0, '2 valid, 0 invalid\n2 written, 0 failed\n']);
    expect((await api.get('/events')).body.total).toBe(2);
  });

  it('numbers NDJSON rows by line and reports a line that is not JSON or not an object', async () => {
    const { id } = await team();
    const f = file('tasks.ndjson', ['{"VolunteerTaskTitle":"Phones"}', '{"VolunteerTaskTitle":', '[1]', '{"VolunteerTaskTitle":"Doors","Bogus":1}'].join('\n'));
    const r = await cli(['import', f, '--team', String(id), '--resource', 'volunteer-tasks', '--dry-run']);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^row 2: -: invalid_json: The line is not valid JSON/);
    expect(lines.slice(1)).toEqual(['row 3: -: invalid_json: The body must be a JSON object.', 'row 4: Bogus: unknown_field: "Bogus" is not a recognised body field here; remove it.', '1 valid, 3 invalid', '']);
  });

  it("reports the rows the server refuses (an unknown constituent) in the same form, and exits 1", async () => {
    const { id, api } = await team();
    const c = (await api.post('/constituents', { LastName: 'Vol' })).body.constituent;
    const f = file('volunteers.csv', `FkConstituent,NumTeeShirtsNeeded\n${c.PkConstituent},2\n99999999,1\n`);
    const r = await cli(['import', f, '--team', String(id), '--resource', 'volunteers']);
    expect(r.stdout).toMatch(/^2 valid, 0 invalid\nrow 2: FkConstituent: invalid_field: [^\n]+\n1 written, 1 failed\n$/);
    expect(r.code).toBe(1);
  });

  it('shows progress on stderr as plain lines with rate and ETA, no carriage return or escape code', async () => {
    const { id } = await team();
    // More rows than one batch (cli/import.ts BATCH_ROWS): progress moves as each batch answers.
    const rows = Array.from({ length: 1200 }, (_, i) => JSON.stringify({ LastName: `P${i}` }));
    const r = await cli(['import', file('many.ndjson', rows.join('\n')), '--team', String(id)]);
    expect(r.code).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line).toMatch(/^import: \d+\/1200 \(\d+\/s, ETA (\d+ s|\?)\)$/);
    expect(lines.at(-1)).toMatch(/^import: 1200\/1200 /);
    expect(r.stderr).not.toMatch(/[\r\x1b]/);
  });
});

describe('turnout export', () => {
  it("streams the team's envelopes as NDJSON on stdout, as the change feed has them, filtered by --types", async () => {
    const { id, api } = await team();
    await api.post('/constituents', { LastName: 'One' });
    await api.post('/events', { EventTitle: 'Rally' });
    const all = await cli(['export', '--team', String(id)]);
    expect(all.code).toBe(0);
    const envelopes = all.stdout.trim().split('\n').map((l) => JSON.parse(l));
    const feed = await fetch(`${server.url}/admin/v1/teams/${id}/changes`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.json() as Promise<{ changes: unknown[]; next: string }>);
    expect(envelopes).toEqual(feed.changes);
    expect(envelopes.map((e) => e.type)).toEqual(['constituent.created', 'event.created']);
    const events = await cli(['export', '--team', String(id), '--types', 'event.*']);
    expect(events.stdout.trim().split('\n').map((l) => JSON.parse(l).type)).toEqual(['event.created']);
    expect(events.stderr).toMatch(/^export: 1 \(\d+\/s\)\n$/);
    const after = await cli(['export', '--team', String(id), '--from', feed.next]);
    expect([after.code, after.stdout]).toEqual([0, '']);
  });

  it('exits 1 with the server\'s error for a bad --from', async () => {
    const { id } = await team();
    const r = await cli(['export', '--team', String(id), '--from', 'not-a-cursor']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/HTTP 400 invalid_field \(from\)/);
  });
});
