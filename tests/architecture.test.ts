// The layers' import rules (.dependency-cruiser.cjs) hold on the whole tree: domain/ imports only
// domain/, nothing outside api/ (but the tests/ and bench/ harnesses) imports api/, each layer
// imports only the layers below it, and no module is part of an import cycle.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const FOLDERS = ['packages', 'domain', 'validation', 'eventlog', 'projections', 'commands', 'dispatcher', 'runtime', 'api', 'cli', 'tests', 'bench'];

/** Cruises `folders` under `baseDir` with the project's rules and the given tsconfig. */
async function cruiseWithRules(baseDir: string, folders: string[], tsConfigFile: string): Promise<ICruiseResult> {
  const options = await extractDepcruiseOptions(path.join(root, '.dependency-cruiser.cjs'));
  const result = await cruise(
    folders,
    { ...options, baseDir, tsConfig: { fileName: tsConfigFile } },
    undefined,
    { tsConfig: extractTSConfig(tsConfigFile) },
  );
  return result.output as ICruiseResult;
}

/** One line per violation: `rule: from -> to`, with a cycle's whole path. */
function describeViolation(v: IViolation): string {
  const to = v.cycle?.length ? v.cycle.map((step) => step.name).join(' -> ') : v.to;
  return `${v.rule.name}: ${v.from} -> ${to}`;
}

describe('the layers', () => {
  it('import only what the layer rules allow, without cycles', async () => {
    const result = await cruiseWithRules(root, FOLDERS, path.join(root, 'tsconfig.json'));
    expect(result.summary.violations.map(describeViolation)).toEqual([]);
    // A cruise that saw nothing would pass too: make sure it read the tree.
    expect(result.summary.totalCruised).toBeGreaterThan(150);
  });

  describe('the rules themselves, on a small tree that breaks each of them', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'turnout-layers-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const files: Record<string, string> = {
      'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true } }),
      'domain/type-only.ts': "import type { Position } from '../eventlog/port.js';\nexport type At = Position;\n",
      'domain/builtin.ts': "import { createHash } from 'node:crypto';\nexport const hash = (s: string) => createHash('sha256').update(s).digest('hex');\n",
      'eventlog/port.ts': "export type Position = bigint;\nexport const later = () => import('../commands/handle.js');\n",
      'commands/handle.ts': "import { route } from '../api/route.js';\nexport const handle = () => route;\n",
      'api/route.ts': "import { handle } from '../commands/handle.js';\nexport const route = () => handle;\n",
      'tests/route.test.ts': "import { route } from '../api/route.js';\nexport const tested = route;\n",
      'cli/main.ts': "import { route } from '../api/route.js';\nexport const run = route;\n",
      'api/run.ts': "import { run } from '../cli/main.js';\nexport const again = run;\n",
      'eventlog/sqlite.ts': "export const open = () => 'file';\n",
      'dispatcher/follow.ts': "import { open } from '../eventlog/sqlite.js';\nimport type { Position } from '../eventlog/port.js';\nexport const follow = (p: Position) => [open, p];\n",
    };
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }

    it('report a type-only import, a dynamic import, a builtin in domain/, an import of api/ or cli/, a cycle and a log adapter used past its port', async () => {
      const result = await cruiseWithRules(dir, ['domain', 'eventlog', 'commands', 'dispatcher', 'api', 'cli', 'tests'], path.join(dir, 'tsconfig.json'));
      expect(result.summary.violations.map(describeViolation).sort()).toEqual([
        'eventlog-imports-only-domain: eventlog/port.ts -> commands/handle.ts',
        'domain-is-pure: domain/builtin.ts -> crypto',
        'domain-is-pure: domain/type-only.ts -> eventlog/port.ts',
        'no-circular: api/route.ts -> commands/handle.ts -> api/route.ts',
        'not-to-api: commands/handle.ts -> api/route.ts',
        'not-to-api: cli/main.ts -> api/route.ts',
        'log-through-its-port: dispatcher/follow.ts -> eventlog/sqlite.ts',
        'not-to-cli: api/run.ts -> cli/main.ts',
      ].sort());
    });
  });

  it('are all compiled into the container image', () => {
    // The Dockerfile copies each source folder by name: a new top-level folder must be added there.
    const build = JSON.parse(readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8').replace(/^\s*\/\/.*$/gm, '')) as { include: string[] };
    const copied = [...readFileSync(path.join(root, 'Dockerfile'), 'utf8').matchAll(/^COPY (\S+) \.\/\1$/gm)].map((m) => m[1]);
    // console/ is bundled by esbuild (console/build.mjs), not tsc: it is copied beside them.
    expect(copied.sort()).toEqual([...build.include, 'console'].sort());
  });
});
