import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { CommandFailed, EXIT, UsageError } from './errors.js';
import { RESOURCES, type Resource } from './resources.js';

/**
 * `turnout`, the operators' command line (decisions.md §13): `npx turnout <command>` against a
 * running server (TURNOUT_URL, TURNOUT_ADMIN_TOKEN), except `rebuild`, which works offline on a
 * data dir. stdout carries only the result, the report or the NDJSON; progress and errors go to
 * stderr. Exit 0 done, 1 failed, 2 bad usage (130 for an interrupted import).
 */

/**
 * The other commands, loaded when one runs: `rebuild` brings the runtime's whole module graph
 * (the stores, the projections), which an import would load for nothing before its first row.
 */
const commands = () => import('./commands.js');

const out = (line: string) => void process.stdout.write(`${line}\n`);
/** A command's exit status, kept for main() to answer. */
const result = (code: number) => void (process.exitCode = code);

function positiveInt(value: string): number {
  if (!/^[1-9]\d{0,15}$/.test(value) || !Number.isSafeInteger(Number(value))) throw new InvalidArgumentError('must be a whole number from 1.');
  return Number(value);
}

function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('must not be empty.');
  return value;
}

function reasonText(value: string): string {
  if (value.length > 200) throw new InvalidArgumentError('must be at most 200 characters.');
  return value;
}

const ENV = `
Environment:
  TURNOUT_URL          the server's origin, such as http://127.0.0.1:3000
  TURNOUT_ADMIN_TOKEN  the server's admin token

Exit status: 0 done, 1 failed, 2 bad usage.`;

function program(): Command {
  const turnout = new Command('turnout')
    .description("Turnout's operator tools: teams, API keys, imports, exports, webhook replays and offline rebuilds.")
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', ENV)
    // commander's own exits (help, usage errors) come back to main() as errors.
    .configureHelp({ sortSubcommands: true });

  const teams = turnout.command('teams').description('create teams');
  teams
    .command('create')
    .description('Create a team; prints {"team": {...}}.')
    .requiredOption('--name <name>', "the team's name", nonEmpty)
    .action(async (o: { name: string }) => result(await (await commands()).createTeam(o.name, out)));

  const keys = turnout.command('keys').description("create a team's API keys");
  keys
    .command('create')
    .description('Create an API key; prints its record, then the key alone on the last line (its only showing).')
    .requiredOption('--team <id>', 'the team', positiveInt)
    .requiredOption('--name <name>', 'what the key is for, such as the tool that holds it', nonEmpty)
    .addOption(new Option('--scope <scope>', 'what it may do').choices(['read_write', 'read_only']).default('read_write'))
    .action(async (o: { team: number; name: string; scope: string }) => result(await (await commands()).createKey(o.team, o.name, o.scope, out)));

  turnout
    .command('import')
    .summary('import records from a CSV or NDJSON file')
    .description(
      'Import records from a CSV file (a header row of public field names) or an NDJSON file (one body a line). ' +
        'Every row is checked first; each invalid one gets a line "row N: FIELD: CODE: message", then "N valid, N invalid". ' +
        'Valid rows are sent in batches of up to 500, each with an Idempotency-Key from the file and its rows, so running the same file again ' +
        'within 24 hours writes nothing twice; a row the server refuses is reported in the same form. Ctrl-C stops sending, waits for the batches in flight and exits 130. ' +
        'Exit 0 only when every row was valid and written (with --dry-run: valid).',
    )
    .argument('<file>', 'a .csv or .ndjson file')
    .requiredOption('--team <id>', 'the team', positiveInt)
    .addOption(new Option('--resource <resource>', 'what the rows are').choices(RESOURCES).default('constituents'))
    .option('--dry-run', 'check every row and report, send nothing', false)
    .action(async (file: string, o: { team: number; resource: Resource; dryRun: boolean }) => result(await (await import('./import.js')).importFile(file, o, out)));

  turnout
    .command('export')
    .summary("the team's changes as NDJSON on stdout")
    .description("The team's changes as NDJSON envelopes on stdout (decisions.md §10), streamed.")
    .requiredOption('--team <id>', 'the team', positiveInt)
    .option('--from <cursor|datetime>', 'after this change-feed cursor, or from this date-time')
    .option('--types <list>', 'comma list of event types or prefixes, such as constituent.*,event.created')
    .action(async (o: { team: number; from?: string; types?: string }) => result(await (await commands()).exportTeam(o.team, o)));

  turnout
    .command('replay')
    .summary('send a webhook endpoint past changes again')
    .description("Send a webhook endpoint the team's past changes again (decisions.md §12), and follow the replay to its end; prints {\"replay\": {...}}.")
    .requiredOption('--team <id>', 'the team', positiveInt)
    .requiredOption('--endpoint <id>', 'the webhook endpoint', positiveInt)
    .requiredOption('--from <cursor|datetime>', 'after this change-feed cursor, or from this date-time')
    .option('--to <cursor|datetime>', 'up to this cursor or date-time (inclusive)')
    .option('--types <list>', 'comma list of event types or prefixes')
    .action(async (o: { team: number; endpoint: number; from: string; to?: string; types?: string }) => result(await (await commands()).replay(o.team, o.endpoint, o, out)));

  turnout
    .command('erase')
    .summary('erase a constituent: every personal value it ever held, everywhere')
    .description(
      'Erase a constituent (decisions.md §17): once this answers, no personal value it held at any revision remains in any file of the server or through any call; ' +
        'it reads as deleted, its history and changes keep their shape with those fields null, and a constituent.erased webhook asks subscribers to erase their copies. ' +
        'Prints {"erased": {"PkConstituent", "erasedAt"}}; erasing it again prints the same. Backups made before are not touched.',
    )
    .requiredOption('--team <id>', 'the team', positiveInt)
    .requiredOption('--constituent <id>', 'the constituent', positiveInt)
    .option('--reason <text>', 'why, for the audit (at most 200 characters)', reasonText)
    .action(async (o: { team: number; constituent: number; reason?: string }) => result(await (await commands()).eraseConstituent(o.team, o.constituent, o.reason, out)));

  turnout
    .command('rebuild')
    .summary('rebuild the read models of a data dir, offline, or prepare them for an upgrade')
    .description(
      'Rebuild every read model of an embedded data dir from its log, offline; refuses while a server holds the data dir.\n\n' +
        'With --prepare, the upgrade path: run it with the new release while the old release\'s server still serves the data dir. ' +
        'It builds the read models whose version changed into a file beside the live ones, reading the log as the server writes it, ' +
        'follows the log until caught up and prints {"prepared": {...}}; the new release started on the data dir adopts that file and applies only what was written since. ' +
        'It writes neither the log nor the live read models, so stopping it at any point is harmless; run again, it goes on where it stopped.\n\n' +
        'With --drop-unused, drop instead the MongoDB read-model collections (TURNOUT_MONGO_URL) of versions no running process reads.',
    )
    .option('--data-dir <dir>', 'the data dir (default: TURNOUT_DATA_DIR, else ./data)')
    .option('--prepare', "build this release's changed read models beside the live ones while the old release's server serves", false)
    .addOption(new Option('--drop-unused', 'drop the MongoDB read-model collections no running build uses (never done automatically)').conflicts('prepare'))
    .action(async (o: { dataDir?: string; prepare: boolean; dropUnused?: boolean }) => {
      const dir = o.dataDir ?? (process.env.TURNOUT_DATA_DIR || './data');
      const { dropUnused, prepare, rebuild } = await commands();
      result(await (o.dropUnused ? dropUnused(process.env.TURNOUT_MONGO_URL || undefined, out) : o.prepare ? prepare(dir, out) : rebuild(dir, out)));
    });

  const withEnv = (c: Command): void => {
    c.commands.forEach(withEnv);
    if (c !== turnout) c.addHelpText('after', ENV);
  };
  withEnv(turnout);
  return turnout;
}

/**
 * What an unexpected failure says (exit 1, decisions.md §13): its message and those of its causes
 * (a server that dropped the connection, a store out of reach, a malformed URL), where the operator
 * can act on them; a stack trace only for a fault of the program itself (a TypeError and the like),
 * which is ours to fix and which the stack locates.
 */
function failure(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  if (err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError || err instanceof SyntaxError) return err.stack ?? err.message;
  const said = [err.message];
  for (let cause = (err as { cause?: unknown }).cause, depth = 0; cause !== undefined && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++)
    said.push(cause instanceof Error ? cause.message : String(cause));
  return said.filter((m, i) => m && said.indexOf(m) === i).join(': ');
}

export async function main(argv: string[]): Promise<number> {
  try {
    await program().parseAsync(argv);
    return Number(process.exitCode ?? EXIT.done);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.done : EXIT.usage;
    if (err instanceof UsageError || err instanceof CommandFailed) {
      process.stderr.write(`turnout: ${err.message}\n`);
      return err.exitCode;
    }
    process.stderr.write(`turnout: ${failure(err)}\n`);
    return EXIT.failed;
  }
}

// A reader that closed early (`turnout import --help | head -2`) took what it wanted: what is left
// to print goes nowhere, and is no crash (Node reports a closed pipe as an 'error' on stdout).
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
});
process.exitCode = await main(process.argv);
