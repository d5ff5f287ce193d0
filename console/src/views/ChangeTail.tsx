import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorText, when } from '../ui';

interface Envelope {
  id: string;
  type: string;
  created: string;
  version?: number;
  data: Record<string, unknown>;
}

const KEEP = 200;
/** Long-poll (decisions.md §10 `wait`): the server answers as soon as a change arrives. */
const WAIT_SECONDS = 20;

/** A live tail of the team's change feed, from the end of the log when the page opened; a pause holds its place. */
export function ChangeTail({ teamId }: { teamId: number }) {
  const [changes, setChanges] = useState<Envelope[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [paused, setPaused] = useState(false);
  // Set once `now` has become a concrete cursor: from then on no change is missed.
  const [following, setFollowing] = useState(false);
  // Where the tail stands, kept across a pause: resuming shows what was written meanwhile.
  const cursor = useRef('now');

  useEffect(() => {
    cursor.current = 'now';
    setChanges([]);
  }, [teamId]);

  useEffect(() => {
    if (paused) return;
    const ctl = new AbortController();
    setFollowing(cursor.current !== 'now');
    let after = cursor.current;
    (async () => {
      while (!ctl.signal.aborted) {
        try {
          // The first look answers at once with the cursor at the end of the log; then long-polls.
          const wait = after === 'now' ? 0 : WAIT_SECONDS;
          const r = await call<{ changes: Envelope[]; next: string }>('GET', `/teams/${teamId}/changes`, { query: { after, wait }, signal: ctl.signal });
          setError(null);
          after = cursor.current = r.next;
          setFollowing(true);
          if (r.changes.length) setChanges((old) => [...r.changes.reverse(), ...old].slice(0, KEEP));
        } catch (err) {
          if (ctl.signal.aborted) return;
          setError(err);
          await new Promise((resolve) => setTimeout(resolve, 3000));
        }
      }
    })();
    return () => ctl.abort();
  }, [teamId, paused]);

  return (
    <section aria-labelledby="tail-title">
      <h2 id="tail-title">Live changes</h2>
      <div class="actions">
        <button type="button" aria-pressed={paused} onClick={() => setPaused(!paused)}>
          {paused ? 'Resume live changes' : 'Pause live changes'}
        </button>
        <span role="status">{paused ? 'Paused.' : following ? 'Following the change feed; new changes appear at the top.' : 'Connecting to the change feed…'}</span>
      </div>
      <ErrorText error={error} />
      <ol class="tail" aria-label="Changes, newest first" aria-live="polite">
        {changes.map((c) => (
          <li key={c.id}>
            <span class="mono">{c.type}</span> {when(c.created)} <span class="muted mono">{c.id}</span>
            <pre>{JSON.stringify(c.data)}</pre>
          </li>
        ))}
      </ol>
    </section>
  );
}
