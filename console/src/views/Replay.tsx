import { useEffect, useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorText, onSubmit, useAction } from '../ui';
import { eventList } from './endpoint';

interface ReplayState {
  id: number | string;
  status: 'running' | 'done' | 'failed';
  queued: number;
  sent: number;
  failed: number;
}

/** decisions.md §12: start a replay of a range, then follow its progress until it ends. */
export function Replay({ path }: { path: string }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [types, setTypes] = useState('');
  const [replay, setReplay] = useState<ReplayState | null>(null);
  const act = useAction();
  const [pollError, setPollError] = useState<unknown>(null);

  useEffect(() => {
    if (!replay || replay.status !== 'running') return;
    const timer = setTimeout(() => {
      call<{ replay: ReplayState }>('GET', `${path}/replays/${replay.id}`).then(
        (r) => setReplay(r.replay),
        (err) => setPollError(err),
      );
    }, 1000);
    return () => clearTimeout(timer);
  }, [replay, path]);

  return (
    <section aria-labelledby="replay-title">
      <h3 id="replay-title">Replay</h3>
      <form
        class="inline"
        onSubmit={onSubmit(() =>
          act.run(async () => {
            setPollError(null);
            const body: Record<string, unknown> = { from };
            if (to) body.to = to;
            if (types) body.types = eventList(types);
            setReplay((await call<{ replay: ReplayState }>('POST', `${path}/replay`, { body })).replay);
          }),
        )}
      >
        <label>
          Replay from (date-time or cursor)
          <input required value={from} placeholder="2026-01-01T00:00:00Z" onInput={(e) => setFrom(e.currentTarget.value)} />
        </label>
        <label>
          Replay to (optional)
          <input value={to} onInput={(e) => setTo(e.currentTarget.value)} />
        </label>
        <label>
          Replay types (optional, comma separated)
          <input value={types} onInput={(e) => setTypes(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={act.busy || replay?.status === 'running'}>
          Start replay
        </button>
      </form>
      <ErrorText error={act.error} />
      <ErrorText error={pollError} />
      {replay && (
        <div role="status" class="progress">
          <p>
            Replay {replay.id}: {replay.status}, {replay.sent} sent and {replay.failed} failed of {replay.queued} queued.
          </p>
          <progress aria-label="Replay progress" max={Math.max(replay.queued, 1)} value={replay.sent + replay.failed} />
        </div>
      )}
    </section>
  );
}
