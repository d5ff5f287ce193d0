import { existsSync } from 'node:fs';
import path from 'node:path';
import { SqliteEventLog } from './eventlog/sqlite.js';
import { decideCreate, validateCreate } from './domain/constituent/decide.js';
import { constituentEvolver, constituentStream } from './domain/constituent/events.js';
import { decideUpdate } from './domain/constituent/decide.js';
import { person } from './bench/names.js';
import { rebuildReadModels } from './runtime/read-models.js';

const dir = process.argv[2];
const n = Number(process.argv[3] ?? 100000);
if (!existsSync(path.join(dir, 'turnout.sqlite'))) {
  const log = new SqliteEventLog(path.join(dir, 'turnout.sqlite'));
  const metadata = { team: 1, source: 'Public API' as const, keyName: 'Bench', correlationId: 'seed', at: new Date().toISOString() };
  await log.append('team-1', [{ type: 'TeamCreated', data: { id: 1, name: 'T' }, metadata }], 'any');
  for (let start = 0; start < n; start += 5000) {
    const appends = [];
    for (let i = start; i < Math.min(n, start + 5000); i++) {
      const id = i + 1;
      const events = decideCreate({ id, fields: validateCreate(person(i)) }, constituentEvolver.initial());
      appends.push(log.append(constituentStream(id), events.map((e) => ({ ...e, metadata })), 'no_stream'));
    }
    await Promise.all(appends);
  }
  await log.close();
  console.log('seeded', n);
}
const t = performance.now(); const cpu0 = process.cpuUsage();
const r = await rebuildReadModels(dir, { onProgress: (p) => console.log(JSON.stringify(p)), progressEveryMs: 2000 });
console.log('rebuilt', r.events, 'events in', Math.round(performance.now() - t), 'ms =', Math.round(r.events / ((performance.now() - t) / 1000)), 'ev/s');
const c = process.cpuUsage(cpu0); console.log('cpu', Math.round((c.user + c.system) / 1000), 'ms');
