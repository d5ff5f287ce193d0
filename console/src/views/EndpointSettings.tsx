import { useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorText, Notice, onSubmit, useAction } from '../ui';
import { type Endpoint, eventList } from './endpoint';

interface Delivery {
  status: string;
  responseStatus: number | null;
  durationMs: number | null;
  error: string | null;
}

/**
 * A whole number typed into a field, or why not in words: `Number()` would read "ten" as NaN,
 * which JSON sends as null, and null means "no limit" to the throttle and "no overlap" to a
 * rotation: the opposite of what was asked.
 */
function wholeNumber(text: string, label: string, least: number): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(Number(t)) || Number(t) < least)
    throw new Error(`${label} must be a whole number${least > 0 ? ` from ${least}` : ' of 0 or more'}; got "${text}".`);
  return Number(t);
}

/** Edit (only the fields changed are sent), disable/enable, throttle, rotate, test. */
export function EndpointSettings({ path, endpoint, secret, onChanged }: { path: string; endpoint: Endpoint; secret: string; onChanged: () => void }) {
  const [url, setUrl] = useState(endpoint.url);
  const [events, setEvents] = useState(endpoint.events.join(', '));
  const [description, setDescription] = useState(endpoint.description ?? '');
  const [maxPerSecond, setMaxPerSecond] = useState(endpoint.maxPerSecond ? String(endpoint.maxPerSecond) : '');
  const [overlap, setOverlap] = useState('0');
  const [showSecret, setShowSecret] = useState(false);
  const [outcome, setOutcome] = useState<string | null>(null);
  const act = useAction();

  const save = () =>
    act.run(async () => {
      const body: Record<string, unknown> = {};
      if (url !== endpoint.url) body.url = url;
      if (eventList(events).join(',') !== endpoint.events.join(',')) body.events = eventList(events);
      if (description !== (endpoint.description ?? '')) body.description = description === '' ? null : description;
      const throttle = maxPerSecond.trim() === '' ? null : wholeNumber(maxPerSecond, 'Maximum requests per second', 1);
      if (throttle !== (endpoint.maxPerSecond ?? null)) body.maxPerSecond = throttle;
      if (Object.keys(body).length === 0) return setOutcome('Nothing changed.');
      await call('PATCH', path, { body });
      setOutcome('Saved.');
      onChanged();
    });
  const setActive = (active: boolean) =>
    act.run(async () => {
      await call('PATCH', path, { body: { active } });
      setOutcome(active ? 'Endpoint enabled.' : 'Endpoint disabled.');
      onChanged();
    });
  const rotate = () =>
    act.run(async () => {
      const seconds = wholeNumber(overlap, 'The old secret\'s signing time (seconds)', 0);
      await call('POST', `${path}/rotate-secret`, { body: { expiresInSeconds: seconds } });
      setOutcome(seconds ? `Secret rotated; the old one signs for ${seconds} more seconds.` : 'Secret rotated; the old one no longer signs.');
      setShowSecret(true);
      onChanged();
    });
  const test = () =>
    act.run(async () => {
      const { delivery } = await call<{ delivery: Delivery }>('POST', `${path}/test`);
      const code = delivery.responseStatus === null ? 'no answer' : `HTTP ${delivery.responseStatus}`;
      setOutcome(`Test delivery ${delivery.status}: ${code}${delivery.durationMs !== null ? ` in ${delivery.durationMs} ms` : ''}${delivery.error ? `, ${delivery.error}` : ''}.`);
    });

  return (
    <>
      <form onSubmit={onSubmit(save)}>
        <label>
          Endpoint URL
          <input required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        </label>
        <label>
          Event types (comma separated, * for all)
          <input required value={events} onInput={(e) => setEvents(e.currentTarget.value)} />
        </label>
        <label>
          Description
          <input value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
        </label>
        <label>
          Maximum requests per second (empty for no limit)
          <input inputMode="numeric" value={maxPerSecond} onInput={(e) => setMaxPerSecond(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={act.busy}>
          Save changes
        </button>
      </form>
      <div class="actions">
        {endpoint.active ? (
          <button type="button" disabled={act.busy} onClick={() => setActive(false)}>
            Disable endpoint
          </button>
        ) : (
          <button type="button" disabled={act.busy} onClick={() => setActive(true)}>
            Enable endpoint
          </button>
        )}
        <button type="button" disabled={act.busy} onClick={test}>
          Send test event
        </button>
      </div>
      <form class="inline" onSubmit={onSubmit(rotate)}>
        <label>
          Old secret keeps signing for (seconds)
          <input inputMode="numeric" value={overlap} onInput={(e) => setOverlap(e.currentTarget.value)} />
        </label>
        <button type="submit" disabled={act.busy}>
          Rotate secret
        </button>
      </form>
      <div class="actions">
        <button type="button" aria-pressed={showSecret} onClick={() => setShowSecret(!showSecret)}>
          {showSecret ? 'Hide signing secret' : 'Show signing secret'}
        </button>
        {showSecret && (
          <label>
            Signing secret
            <input readOnly class="mono" value={secret} />
          </label>
        )}
      </div>
      <ErrorText error={act.error} />
      {outcome && !act.error && <Notice>{outcome}</Notice>}
    </>
  );
}
