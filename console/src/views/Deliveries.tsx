import { useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorText, Notice, Pager, useAction, useLoad, when } from '../ui';
import { Replay } from './Replay';

interface Delivery {
  id: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: 'pending' | 'succeeded' | 'failed' | 'abandoned';
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
  attemptedAt: string | null;
  nextAttemptAt: string | null;
}

const PAGE_SIZE = 25;

/** The endpoint's delivery log, one row per attempt; resend one, or replay a range. */
export function Deliveries({ path }: { path: string }) {
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(1);
  const list = useLoad(() => call<{ deliveries: Delivery[] }>('GET', `${path}/deliveries`, { query: { status, page, pageSize: PAGE_SIZE } }), [path, status, page]);
  const [resent, setResent] = useState<string | null>(null);
  const act = useAction();
  const rows = list.data?.deliveries ?? [];
  return (
    <>
      <div class="actions">
        <label>
          Delivery status
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value);
              setPage(1);
            }}
          >
            <option value="">any</option>
            <option value="pending">pending</option>
            <option value="succeeded">succeeded</option>
            <option value="failed">failed</option>
            <option value="abandoned">abandoned</option>
          </select>
        </label>
        <button type="button" onClick={list.reload}>
          Refresh deliveries
        </button>
      </div>
      <ErrorText error={list.error} />
      <ErrorText error={act.error} />
      {resent && !act.error && <Notice>{resent}</Notice>}
      <table>
        <caption>Delivery attempts</caption>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Attempt</th>
            <th scope="col">Status</th>
            <th scope="col">Status code</th>
            <th scope="col">Duration</th>
            <th scope="col">Error</th>
            <th scope="col">Attempted</th>
            <th scope="col">Next attempt</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((d) => (
            <tr>
              <td>
                <span class="mono">{d.eventId}</span>
                <div class="muted">{d.eventType}</div>
              </td>
              <td>{d.attempt}</td>
              <td>{d.status}</td>
              <td>{d.responseStatus ?? '—'}</td>
              <td>{d.durationMs === null ? '—' : `${d.durationMs} ms`}</td>
              <td>{d.error ?? '—'}</td>
              <td>{when(d.attemptedAt)}</td>
              <td>{when(d.nextAttemptAt)}</td>
              <td>
                <button
                  type="button"
                  aria-label={`Resend ${d.eventId} (attempt ${d.attempt})`}
                  disabled={act.busy}
                  onClick={() =>
                    act.run(async () => {
                      await call('POST', `${path}/deliveries/${encodeURIComponent(d.id)}/resend`);
                      setResent(`Resending ${d.eventId}: a new attempt chain is queued.`);
                      list.reload();
                    })
                  }
                >
                  Resend
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {list.data && rows.length === 0 && <p>No deliveries{status ? ` with status ${status}` : ''}.</p>}
      <Pager label="Deliveries" page={page} canNext={rows.length === PAGE_SIZE} onPage={setPage} />
      <Replay path={path} />
    </>
  );
}
