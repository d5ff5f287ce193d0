import { call } from '../api';
import { ErrorText, useLoad, when } from '../ui';

interface Pending {
  PkConstituent: number;
  teamId: number;
  state: 'waiting' | 'running' | 'retrying';
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
}

/**
 * Erasures the server has journaled and not finished (GET /admin/v1/erasures): /readyz only
 * counts them, without a token; here the operator sees which, how many attempts failed and why.
 * The server finishes each by itself; erasing again from the API joins or hastens it.
 */
export function Erasures() {
  const list = useLoad(() => call<{ erasures: Pending[] }>('GET', '/erasures'), []);
  const rows = list.data?.erasures ?? [];
  return (
    <section aria-labelledby="erasures-title">
      <h2 id="erasures-title">Unfinished erasures</h2>
      <ErrorText error={list.error} />
      {list.data && rows.length === 0 ? <p>None: every erasure asked for is done.</p> : null}
      {rows.length ? (
        <table>
          <caption>Erasures being finished by the server</caption>
          <thead>
            <tr>
              <th scope="col">Constituent</th>
              <th scope="col">Team</th>
              <th scope="col">State</th>
              <th scope="col">Failed attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((e) => (
              <tr>
                <td>{e.PkConstituent}</td>
                <td>{e.teamId}</td>
                <td>{e.state}</td>
                <td>{e.attempts}</td>
                <td>{e.lastError ?? '—'}</td>
                <td>{when(e.nextAttemptAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <button type="button" onClick={list.reload} disabled={list.loading}>
        Refresh erasures
      </button>
    </section>
  );
}
