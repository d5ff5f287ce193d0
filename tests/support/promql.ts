/** PromQL's functions, aggregations and keywords: the identifiers of an expression that are not metric names. */
const NOT_METRICS = new Set([
  'sum', 'min', 'max', 'avg', 'count', 'stddev', 'stdvar', 'topk', 'bottomk', 'quantile', 'count_values', 'group',
  'rate', 'irate', 'increase', 'delta', 'idelta', 'deriv', 'histogram_quantile', 'abs', 'clamp_min', 'clamp_max',
  'sum_over_time', 'avg_over_time', 'max_over_time', 'min_over_time', 'absent', 'vector', 'scalar', 'time',
  'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset',
]);

/**
 * The metric names an expression reads: label matchers, grouping clauses, strings, durations and
 * Grafana's `$variables` taken out, then every identifier not a PromQL word or a function call.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\$\w+/g, ' ');
  const out = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*(\()?)/g)) {
    if (m[1] || NOT_METRICS.has(m[0]) || /^\d/.test(m[0])) continue;
    if (/^[0-9.e]+$/i.test(m[0])) continue;
    out.add(m[0]);
  }
  return [...out];
}

/** The family a series name belongs to: a histogram's `_bucket`, `_sum` and `_count` are its own. */
export const familyOf = (name: string, families: Set<string>): string | null => {
  if (families.has(name)) return name;
  const base = name.replace(/_(bucket|sum|count)$/, '');
  return families.has(base) ? base : null;
};
