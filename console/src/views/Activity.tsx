import { useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorText, onSubmit, Pager, useLoad, when } from '../ui';

interface Entry {
  at: string;
  source: string;
  keyName: string | null;
  action: string;
  recordType: string;
  recordId: number;
}

const PAGE_SIZE = 25;

/** The team's activity log, newest as the API orders it, filtered by key name and source. */
export function Activity({ teamId }: { teamId: number }) {
  const [keyName, setKeyName] = useState('');
  const [source, setSource] = useState('');
  const [filters, setFilters] = useState({ keyName: '', source: '' });
  const [page, setPage] = useState(1);
  const log = useLoad(
    () => call<{ activity: Entry[]; total?: number }>('GET', `/teams/${teamId}/activity`, { query: { page, pageSize: PAGE_SIZE, keyName: filters.keyName, source: filters.source } }),
    [teamId, page, filters],
  );
  const rows = log.data?.activity ?? [];
  const total = log.data?.total;
  return (
    <section aria-labelledby="activity-title">
      <h2 id="activity-title">Activity</h2>
      <form
        class="inline"
        onSubmit={onSubmit(() => {
          setFilters({ keyName: keyName.trim(), source });
          setPage(1);
        })}
      >
        <label>
          Key name
          <input value={keyName} onInput={(e) => setKeyName(e.currentTarget.value)} />
        </label>
        <label>
          Source
          <select value={source} onChange={(e) => setSource(e.currentTarget.value)}>
            <option value="">any</option>
            <option value="Public API">Public API</option>
            <option value="Application">Application</option>
          </select>
        </label>
        <button type="submit">Filter activity</button>
      </form>
      <ErrorText error={log.error} />
      <table>
        <caption>Activity{total !== undefined ? ` (${total} in all)` : ''}</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Source</th>
            <th scope="col">Key</th>
            <th scope="col">Action</th>
            <th scope="col">Record</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((a) => (
            <tr>
              <td>{when(a.at)}</td>
              <td>{a.source}</td>
              <td>{a.keyName ?? '—'}</td>
              <td>{a.action}</td>
              <td>
                {a.recordType} {a.recordId}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {log.data && rows.length === 0 && <p>No activity{filters.keyName || filters.source ? ' matches these filters' : ''}.</p>}
      <Pager label="Activity" page={page} canNext={total !== undefined ? page * PAGE_SIZE < total : rows.length === PAGE_SIZE} onPage={setPage} />
    </section>
  );
}
