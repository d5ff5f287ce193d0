import { useState } from 'preact/hooks';
import { call } from '../api';
import { ErrorText, useLoad, when } from '../ui';
import { Deliveries } from './Deliveries';
import { type Endpoint } from './endpoint';
import { EndpointSettings } from './EndpointSettings';
import { StatsChart } from './StatsChart';

const TABS = [
  ['settings', 'Settings'],
  ['deliveries', 'Deliveries'],
  ['chart', 'Last 24 hours'],
] as const;
type Tab = (typeof TABS)[number][0];

/** One endpoint: its settings and operations, its delivery log, its hourly chart. */
export function EndpointDetail({ teamId, endpointId }: { teamId: number; endpointId: number }) {
  const path = `/teams/${teamId}/webhook-endpoints/${endpointId}`;
  const loaded = useLoad(() => call<{ webhookEndpoint: Endpoint; secret: string }>('GET', path), [path]);
  const [tab, setTab] = useState<Tab>('settings');
  const ep = loaded.data?.webhookEndpoint;
  const onTabKey = (e: KeyboardEvent) => {
    const at = TABS.findIndex(([key]) => key === tab);
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: TABS.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const next = TABS[(to + TABS.length) % TABS.length][0];
    setTab(next);
    document.getElementById(`tab-${next}`)?.focus();
  };
  return (
    <section aria-labelledby="endpoint-title">
      <p>
        <a href={`#/teams/${teamId}/endpoints`}>All endpoints</a>
      </p>
      <h2 id="endpoint-title">Endpoint {ep ? ep.url : `#${endpointId}`}</h2>
      <ErrorText error={loaded.error} />
      {ep && (
        <p class="state">
          {ep.active ? 'Active' : `Disabled${ep.disabledAt ? ` since ${when(ep.disabledAt)}` : ''}${ep.disabledReason ? ` (${ep.disabledReason})` : ''}`}
          {ep.maxPerSecond ? ` · at most ${ep.maxPerSecond} requests per second` : ''}
        </p>
      )}
      {/* The ARIA tabs pattern: one tab stop, arrows (and Home, End) move between tabs. */}
      <div role="tablist" aria-label="Endpoint views" onKeyDown={onTabKey}>
        {TABS.map(([key, label]) => (
          <button
            type="button"
            role="tab"
            id={`tab-${key}`}
            aria-selected={tab === key}
            aria-controls={tab === key ? `panel-${key}` : undefined}
            tabIndex={tab === key ? 0 : -1}
            onClick={() => setTab(key)}
          >
            {label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {/* Keyed by endpoint: another endpoint's page (a link, a bookmark, back) starts its form afresh, never with the last one's values. */}
        {tab === 'settings' && ep && ep.id === endpointId && <EndpointSettings key={endpointId} path={path} endpoint={ep} secret={loaded.data!.secret} onChanged={loaded.reload} />}
        {tab === 'deliveries' && <Deliveries path={path} />}
        {tab === 'chart' && <StatsChart path={path} />}
      </div>
    </section>
  );
}
