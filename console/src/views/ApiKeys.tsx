import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorText, Notice, onSubmit, useAction, useLoad, when } from '../ui';

interface ApiKey {
  id: number;
  name: string;
  scope: 'read_write' | 'read_only';
  prefix: string;
  createdAt: string;
  revokedAt: string | null;
}

/**
 * The new key, shown once: it lives only in this component's state, never in storage. Focus moves
 * to the key as it appears (selected, and read out by a screen reader), and back to the key form
 * once it is put away.
 */
function NewKey({ apiKey, secret, onDone }: { apiKey: ApiKey; secret: string; onDone: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused the clipboard: select the key and copy it by hand.');
    }
  };
  return (
    <div class="once" role="region" aria-label="New API key">
      <p>
        The key <strong>{apiKey.name}</strong> is shown this once; Turnout keeps only its hash.
      </p>
      <label>
        New API key
        <input ref={input} readOnly value={secret} class="mono" onFocus={(e) => e.currentTarget.select()} />
      </label>
      <button type="button" onClick={copy}>
        Copy key
      </button>
      <button type="button" onClick={onDone}>
        I have saved it
      </button>
      {copied && <Notice>{copied}</Notice>}
    </div>
  );
}

export function ApiKeys({ teamId }: { teamId: number }) {
  const keys = useLoad(() => call<{ apiKeys: ApiKey[] }>('GET', `/teams/${teamId}/api-keys`), [teamId]);
  const [name, setName] = useState('');
  const [scope, setScope] = useState<ApiKey['scope']>('read_write');
  const [shown, setShown] = useState<{ apiKey: ApiKey; key: string } | null>(null);
  const nameInput = useRef<HTMLInputElement>(null);
  const act = useAction();
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      <form
        class="inline"
        onSubmit={onSubmit(() =>
          act.run(async () => {
            setShown(await call('POST', `/teams/${teamId}/api-keys`, { body: { name, scope } }));
            setName('');
            keys.reload();
          }),
        )}
      >
        <label>
          Key name
          <input ref={nameInput} required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Scope
          <select value={scope} onChange={(e) => setScope(e.currentTarget.value as ApiKey['scope'])}>
            <option value="read_write">read and write</option>
            <option value="read_only">read only</option>
          </select>
        </label>
        <button type="submit" disabled={act.busy}>
          Create key
        </button>
      </form>
      <ErrorText error={act.error} />
      {shown && (
        <NewKey
          apiKey={shown.apiKey}
          secret={shown.key}
          onDone={() => {
            setShown(null);
            nameInput.current?.focus();
          }}
        />
      )}
      <ErrorText error={keys.error} />
      <table>
        <caption>Keys of this team</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Scope</th>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Revoked</th>
            <th scope="col">Actions</th>
          </tr>
        </thead>
        <tbody>
          {(keys.data?.apiKeys ?? []).map((k) => (
            <tr>
              <td>{k.name}</td>
              <td>{k.scope}</td>
              <td class="mono">{k.prefix}</td>
              <td>{when(k.createdAt)}</td>
              <td>{when(k.revokedAt)}</td>
              <td>
                {!k.revokedAt && (
                  <button type="button" aria-label={`Revoke key ${k.name}`} disabled={act.busy} onClick={() => act.run(async () => (await call('DELETE', `/teams/${teamId}/api-keys/${k.id}`), keys.reload()))}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
