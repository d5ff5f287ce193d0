import { useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorText, onSubmit, useAction, when } from '../ui';

interface StreamEvent {
  position: number;
  revision: number;
  type: string;
  at: string;
  source: string;
  keyName: string | null;
  data: Record<string, unknown>;
}

interface Write {
  event: StreamEvent;
  changes: Array<{ field: string; from: unknown; to: unknown }>;
}

/**
 * The admin history gives each stored event's data (created: {id, fields}, updated: {id, changes},
 * others their own keys); folding them in order gives each field's value before and after.
 */
export function fieldChanges(events: StreamEvent[]): Write[] {
  const state: Record<string, unknown> = {};
  return events.map((event) => {
    const { id: _id, fields, changes, ...other } = event.data as Record<string, unknown>;
    const set = { ...((fields ?? changes ?? other) as Record<string, unknown>) };
    const rows = Object.entries(set).map(([field, to]) => ({ field, from: state[field] ?? null, to }));
    Object.assign(state, set);
    return { event, changes: rows };
  });
}

const show = (v: unknown) => (v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));

const RESOURCES = ['constituents', 'volunteers', 'volunteer-tasks', 'events'];

export function History({ teamId }: { teamId: number }) {
  const [resource, setResource] = useState(RESOURCES[0]);
  const [id, setId] = useState('');
  const [writes, setWrites] = useState<Write[] | null>(null);
  const act = useAction();
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title">Record history</h2>
      <form
        class="inline"
        onSubmit={onSubmit(() =>
          act.run(async () => {
            setWrites(null);
            const r = await call<{ events: StreamEvent[] }>('GET', `/teams/${teamId}/history/${resource}/${encodeURIComponent(id.trim())}`);
            setWrites(fieldChanges(r.events));
          }),
        )}
      >
        <label>
          Resource
          <select value={resource} onChange={(e) => setResource(e.currentTarget.value)}>
            {RESOURCES.map((r) => (
              <option value={r}>{r}</option>
            ))}
          </select>
        </label>
        <label>
          Record id
          <input required inputMode="numeric" value={id} onInput={(e) => setId(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={act.busy}>
          Show history
        </button>
      </form>
      <ErrorText error={act.error} />
      {writes?.map(({ event, changes }) => (
        <table class="history">
          <caption>
            Revision {event.revision}: {event.type} at {when(event.at)} by {event.source}
            {event.keyName ? ` (${event.keyName})` : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">From</th>
              <th scope="col">To</th>
            </tr>
          </thead>
          <tbody>
            {changes.map((c) => (
              <tr>
                <th scope="row">{c.field}</th>
                <td>{show(c.from)}</td>
                <td>{show(c.to)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ))}
    </section>
  );
}
