import Database from 'better-sqlite3';
const src = new Database('/tmp/h10perf/d1/readmodels.sqlite', { readonly: true });
const ddl = src.prepare("SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'constituents' AND sql IS NOT NULL AND type IN ('table','index')").all() as any[];
const rows = src.prepare('SELECT * FROM constituents').raw().all() as unknown[][];
const cols = src.prepare('SELECT * FROM constituents LIMIT 1').columns().map((c) => `"${c.name}"`);
for (const variant of ['all', 'noscan', 'noindexes']) {
  const db = new Database(`/tmp/h10perf/ix-${variant}.sqlite`); db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL'); db.pragma('cache_size = -65536');
  db.exec('DROP TABLE IF EXISTS constituents');
  for (const d of ddl) { if (variant === 'noscan' && d.name.includes('scan')) continue; if (variant === 'noindexes' && d.type === 'index') continue; db.exec(d.sql); }
  const ins = db.prepare(`INSERT INTO constituents (${cols.join(',')}) VALUES (${cols.map(() => '?').join(',')}) ON CONFLICT(_key) DO UPDATE SET doc = excluded.doc`);
  const t = performance.now();
  db.exec('BEGIN'); for (const r of rows) ins.run(...r); db.exec('COMMIT');
  const t2 = performance.now();
  let extra = 0;
  if (variant !== 'all') { const t3 = performance.now(); db.exec('BEGIN'); for (const d of ddl) if (d.type === 'index' && (variant === 'noindexes' || d.name.includes('scan'))) db.exec(d.sql); db.exec('COMMIT'); extra = performance.now() - t3; }
  console.log(variant, 'insert', Math.round(t2 - t), 'create index after', Math.round(extra));
  db.close();
}
