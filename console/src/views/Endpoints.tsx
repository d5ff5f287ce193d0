import { useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorText, onSubmit, useAction, useLoad, when } from '../ui';
import { type Endpoint, eventList } from './endpoint';

export function Endpoints({ teamId }: { teamId: number }) {
  const list = useLoad(() => call<{ webhookEndpoints: Endpoint[] }>('GET', `/teams/${teamId}/webhook-endpoints`), [teamId]);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState('*');
  const [description, setDescription] = useState('');
  const [created, setCreated] = useState<{ webhookEndpoint: Endpoint; secret: string } | null>(null);
  const act = useAction();
  return (
    <section aria-labelledby="endpoints-title">
      <h2 id="endpoints-title">Webhook endpoints</h2>
      <form
        onSubmit={onSubmit(() =>
          act.run(async () => {
            const body: Record<string, unknown> = { url, events: eventList(events) };
            if (description) body.description = description;
            setCreated(await call('POST', `/teams/${teamId}/webhook-endpoints`, { body }));
            setUrl('');
            setDescription('');
            list.reload();
          }),
        )}
      >
        <label>
          Endpoint URL
          <input required value={url} placeholder="https://example.org/hooks" onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <label>
          Event types (comma separated, * for all)
          <input required value={events} onInput={(e) => setEvents(e.currentTarget.value)} />
        </label>
        <label>
          Description (optional)
          <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={act.busy}>
          Create endpoint
        </button>
      </form>
      <ErrorText error={act.error} />
      {created && (
        <div class="once" role="region" aria-label="New endpoint's signing secret">
          <p>
            Endpoint #{created.webhookEndpoint.id} created. Its signing secret:
          </p>
          <label>
            Signing secret
            <input readOnly class="mono" value={created.secret} />
          </label>
        </div>
      )}
      <ErrorText error={list.error} />
      <table>
        <caption>Endpoints of this team</caption>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">State</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {(list.data?.webhookEndpoints ?? []).map((ep) => (
            <tr>
              <td>
                <a href={`#/teams/${teamId}/endpoints/${ep.id}`} aria-label={`Open endpoint ${ep.url}`}>
                  {ep.url}
                </a>
                {ep.description && <div class="muted">{ep.description}</div>}
              </td>
              <td>{ep.events.join(', ')}</td>
              <td>{ep.active ? 'active' : `disabled${ep.disabledReason ? ` (${ep.disabledReason})` : ''}`}</td>
              <td>{when(ep.createdAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
