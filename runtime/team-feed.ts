import type { FollowerStatus } from '../eventlog/follower.js';
import type { EventLog } from '../eventlog/port.js';
import type { EsdbEventLog } from '../eventlog/esdb.js';

/** How often the projector looks at EventStoreDB's team projection after its start. */
const CHECK_EVERY_MS = 30_000;

/**
 * On EventStoreDB, the process that runs the projectors makes the team projection of the change
 * feed what this version needs when it starts, and looks again every 30 s: a stopped or faulted
 * projection is reported in the log and in /readyz (`team-feed`) instead of serving stale pages
 * (eventlog/esdb-team.ts). Null on any other log.
 */
export async function watchTeamFeed(log: EventLog, report: (message: string) => void): Promise<{ status: () => FollowerStatus; stop: () => void } | null> {
  // Asked of the log, not `instanceof`: that would load the EventStoreDB client (a fifth of a
  // start's module loading) into every embedded process, which never uses it.
  if (!('teamFeed' in log) || typeof log.teamFeed !== 'function') return null;
  const feed = (log as EsdbEventLog).teamFeed();
  const check = () => feed.check(report).catch((err) => report(`EventStoreDB projection check failed: ${err instanceof Error ? err.message : String(err)}`));
  await check();
  const timer = setInterval(() => void check(), CHECK_EVERY_MS);
  timer.unref();
  return { status: () => feed.status(), stop: () => clearInterval(timer) };
}
