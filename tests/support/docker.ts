import { getContainerRuntimeClient } from 'testcontainers';

export interface DockerProbe {
  ok: boolean;
  /** Why the container suites skip, for the line they print. */
  reason?: string;
}

let probe: Promise<DockerProbe> | null = null;

/**
 * Whether a container engine is reachable, asked once per test process. Suites that need a real
 * server (EventStoreDB, MongoDB) skip when it is not, and print why, rather than fail on a
 * developer's machine without Docker. TURNOUT_SKIP_CONTAINERS=1 forces the skip.
 */
export function dockerAvailable(): Promise<DockerProbe> {
  probe ??= (async (): Promise<DockerProbe> => {
    if (process.env.TURNOUT_SKIP_CONTAINERS === '1') return { ok: false, reason: 'TURNOUT_SKIP_CONTAINERS=1' };
    try {
      await getContainerRuntimeClient();
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: err instanceof Error ? err.message : String(err) };
    }
  })();
  return probe;
}
