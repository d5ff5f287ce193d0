import { call } from '../api';
import { ErrorText, useLoad } from '../ui';

interface Hour {
  hour: string;
  succeeded: number;
  failed: number;
}

const W = 720;
const H = 160;
const PAD = 24;
/** Room above the tallest bar for the scale's label. */
const TOP = 14;

/** Successes and failures per hour for the last 24 hours (decisions.md §12 stats), as SVG bars. */
export function StatsChart({ path }: { path: string }) {
  const stats = useLoad(() => call<{ hours: Hour[] }>('GET', `${path}/stats`, { query: { hours: 24 } }), [path]);
  const hours = stats.data?.hours ?? [];
  const top = Math.max(1, ...hours.map((h) => h.succeeded + h.failed));
  const slot = (W - PAD) / Math.max(hours.length, 1);
  const y = (n: number) => ((H - PAD - TOP) * n) / top;
  const total = hours.reduce((s, h) => ({ ok: s.ok + h.succeeded, bad: s.bad + h.failed }), { ok: 0, bad: 0 });
  return (
    <figure>
      <ErrorText error={stats.error} />
      {stats.data && (
        <>
          <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`Delivery attempts per hour, last 24 hours: ${total.ok} succeeded, ${total.bad} failed`} class="chart">
            <line x1={PAD} y1={H - PAD} x2={W} y2={H - PAD} class="axis" />
            <text x={0} y={12} class="tick">
              {top}
            </text>
            {hours.map((h, i) => {
              const x = PAD + i * slot + 2;
              const ok = y(h.succeeded);
              const bad = y(h.failed);
              return (
                <g>
                  <title>{`${new Date(h.hour).toLocaleString()}: ${h.succeeded} succeeded, ${h.failed} failed`}</title>
                  <rect x={x} y={H - PAD - ok} width={slot - 4} height={ok} class="ok" />
                  <rect x={x} y={H - PAD - ok - bad} width={slot - 4} height={bad} class="bad" />
                  {i % 6 === 0 && (
                    <text x={x} y={H - 6} class="tick">
                      {new Date(h.hour).getHours()}:00
                    </text>
                  )}
                </g>
              );
            })}
          </svg>
          <figcaption>
            <span class="key ok">succeeded {total.ok}</span> <span class="key bad">failed {total.bad}</span>
          </figcaption>
        </>
      )}
    </figure>
  );
}
