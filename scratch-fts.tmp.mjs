import Database from 'better-sqlite3';
const db = new Database('/tmp/h10perf/d1/readmodels.sqlite');
const ftss = db.prepare("SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'").pluck().all();
console.log(ftss);
for (const f of ftss) {
  let t = performance.now();
  db.exec(`INSERT INTO "${f}"("${f}") VALUES ('rebuild')`);
  console.log(f, 'rebuild', Math.round(performance.now() - t));
  t = performance.now();
  db.exec(`INSERT INTO "${f}"("${f}") VALUES ('optimize')`);
  console.log(f, 'optimize', Math.round(performance.now() - t));
}
console.log(db.prepare("select count(*) from constituents").pluck().get());
