import { existsSync } from 'node:fs';
import { cpus } from 'node:os';

/**
 * `npm run bench`: runs every benchmark module and prints its figures. Each module exports
 * `run(): Promise<{name, lines}>`. A module whose compiled file is not there yet is skipped, so
 * the runner works while benchmarks are still being written. `npm run bench -- constituents`
 * (or `BENCH_ONLY=constituents`) picks one. `scale` writes a million records and takes many
 * minutes, and `import` sends 100,000 rows through the CLI, so they run only when named; so does
 * `log` (issue 15's targets, a million changes by default), and `observability` (issue 33's costs
 * of metrics and tracing, about two minutes).
 */
const MODULES = ['constituents', 'webhooks', 'replay', 'import', 'scale', 'log', 'observability', 'sealing', 'projector', 'handed'];
const BY_DEFAULT = ['constituents', 'webhooks', 'replay'];

interface BenchModule {
  run(): Promise<{ name: string; lines: string[] }>;
}

async function main() {
  const named = [...process.argv.slice(2), ...(process.env.BENCH_ONLY?.split(',') ?? [])].map((s) => s.trim()).filter(Boolean);
  const only = named.length ? named : BY_DEFAULT;
  const unknown = only.filter((m) => !MODULES.includes(m));
  if (unknown.length) throw new Error(`no such benchmark: ${unknown.join(', ')} (there are ${MODULES.join(', ')})`);
  console.log(`Turnout benchmarks, ${new Date().toISOString().slice(0, 10)}, node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'})`);
  if (!(globalThis as { gc?: unknown }).gc) console.log('(run with --expose-gc, as `npm run bench` does, for steadier figures)');
  let failed = false;
  for (const name of MODULES) {
    if (!only.includes(name)) continue;
    const file = new URL(`./${name}.js`, import.meta.url);
    if (!existsSync(file)) {
      console.log(`\n[${name}] not built yet (no ${name}.ts): skipped`);
      continue;
    }
    const t0 = performance.now();
    try {
      const mod = (await import(file.href)) as BenchModule;
      const { name: title, lines } = await mod.run();
      console.log(`\n[${title}] (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
      for (const l of lines) console.log(l);
    } catch (err) {
      failed = true;
      console.error(`\n[${name}] failed:`, err);
    }
  }
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
