// The layers' import rules, checked by tests/architecture.test.ts on every `npm test`
// and by hand with `npx depcruise --config .dependency-cruiser.cjs packages domain validation eventlog
// projections commands dispatcher runtime api cli tests bench`. docs/architecture.md draws the same graph.

// Which top-level folders each layer may import (its own included). Every import between the
// layers points down this list, so the folders cannot form a cycle. npm packages and node
// builtins are not layers: every layer but domain/ may use them.
const LAYERS = {
  // Standalone packages a subscriber installs on their own (the webhook verifier): they import
  // nothing of the project; the dispatcher re-exports them so there is one implementation.
  packages: ['packages'],
  domain: ['domain'],
  // The request bodies' schemas, their validator and its errors in the spec's shape: shared by the
  // HTTP edge and the command line, which checks import rows as the API would before sending.
  validation: ['domain', 'validation'],
  eventlog: ['domain', 'eventlog'],
  projections: ['domain', 'eventlog', 'projections'],
  commands: ['domain', 'eventlog', 'projections', 'commands'],
  dispatcher: ['packages', 'domain', 'eventlog', 'projections', 'dispatcher'],
  runtime: ['packages', 'domain', 'eventlog', 'projections', 'commands', 'dispatcher', 'runtime'],
  api: ['packages', 'domain', 'validation', 'eventlog', 'projections', 'commands', 'dispatcher', 'runtime', 'api'],
  // The operators' command line: an HTTP client of the API that checks rows with the API's own
  // validation/, and rebuilds offline through runtime/. It does not import the HTTP edge; nothing imports it.
  cli: ['packages', 'domain', 'validation', 'eventlog', 'projections', 'commands', 'dispatcher', 'runtime', 'cli'],
};
// The top layers: nothing imports them but themselves and the harnesses.
const TOP = ['api', 'cli'];

// tests/ and bench/ are harnesses outside the layers: they may import any layer (api/ included),
// and no layer may import them.
const FOLDERS = [...Object.keys(LAYERS), 'tests', 'bench'];
const anyOf = (folders) => `^(${folders.join('|')})/`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment:
        'domain/ imports only domain/: no other layer, no npm package and no node builtin. Its ' +
        'rules must give the same answer on every replay, so they take no clock, randomness or ' +
        'I/O (ids and times come in from commands/). Pure builtins such as hashing would be ' +
        'harmless, but nothing in domain/ needs one; allow a named one here if a rule ever does.',
      from: { path: '^domain/' },
      to: { pathNot: '^domain/' },
    },
    {
      name: 'not-to-api',
      severity: 'error',
      comment:
        'api/ is the HTTP edge: nothing imports it but api/ itself and the harnesses outside the ' +
        'layers (tests/ and bench/ start the app as a client would); cli/ reaches it over HTTP only.',
      from: { pathNot: '^(api|tests|bench)/' },
      to: { path: '^api/' },
    },
    {
      name: 'not-to-cli',
      severity: 'error',
      comment: 'cli/ is the command line, a top layer like api/: nothing imports it but cli/ itself and the harnesses.',
      from: { pathNot: '^(cli|tests|bench)/' },
      to: { path: '^cli/' },
    },
    // One rule for each other layer, naming what it may import (domain-is-pure covers domain/).
    // api/ and cli/ are left out of their targets: not-to-api and not-to-cli report those once.
    ...Object.entries(LAYERS)
      .filter(([layer]) => layer !== 'domain')
      .map(([layer, allowed]) => ({
        name: `${layer}-imports-only-${allowed.filter((f) => f !== layer).join('-')}`,
        severity: 'error',
        comment: `${layer}/ may import only ${allowed.map((f) => `${f}/`).join(', ')} (and npm packages and node builtins).`,
        from: { path: `^${layer}/` },
        to: { path: anyOf(FOLDERS.filter((f) => !TOP.includes(f))), pathNot: anyOf(allowed) },
      })),
    {
      name: 'log-through-its-port',
      severity: 'error',
      comment:
        'Projectors, commands and the dispatcher use the event log through its port (port.ts, and ' +
        'load.ts, follower.ts, pause.ts, backoff.ts, once.ts and sealing.ts, written against it or needing nothing of an adapter); only the composition root (runtime/), and ' +
        'the harnesses, choose and open an adapter (sqlite*, esdb).',
      from: { path: '^(projections|commands|dispatcher)/' },
      to: { path: '^eventlog/', pathNot: '^eventlog/(port|load|follower|pause|backoff|once|sealing)[.]ts$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'No module imports itself through others, type-only imports included: a cycle hides an ' +
        'order of evaluation and usually a missing layer or a misplaced type.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment:
        "Every relative import resolves to one of the project's files, so none escapes the rules " +
        "above unseen. (Packages are left out: some, like @nats-io/kv, declare a types file they " +
        'do not ship, which only the type checker works around.)',
      from: {},
      to: { couldNotResolve: true, path: '^[.]' },
    },
  ],
  options: {
    // The type checker's view of imports: `import type` and type-only re-exports count too, as do
    // dynamic `await import(...)` calls.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^node_modules/' },
    enhancedResolveOptions: {
      extensions: ['.ts', '.js', '.json'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
