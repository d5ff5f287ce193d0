import { SqliteReadCore } from './projections/store/sqlite-core.js';
import { projectors } from './projections/index.js';
import { constituentSearch } from './projections/constituents.js';
const core = new SqliteReadCore('/tmp/h10perf/d1/readmodels.sqlite', { readerOnly: true });
for (const p of projectors) for (const c of p.collections) core.define(c);
for (const term of ['Nguyen', 'son.da', '54322', '4242@', 'an', 'a', 'zq']) {
  const times: number[] = [];
  let total = 0;
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    const r = core.find(constituentSearch(1, term, { page: 1, pageSize: 50 }));
    times.push(performance.now() - t);
    total = r.total;
  }
  times.sort((a, b) => a - b);
  console.log(term.padEnd(8), 'total', String(total).padStart(6), 'median', times[10].toFixed(1), 'max', times[19].toFixed(1));
}
