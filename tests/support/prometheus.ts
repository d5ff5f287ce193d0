export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (enough of the format for our own output). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2].replace(/\\(.)/g, (_x, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The families (names from the # TYPE lines) of an exposition. */
export const families = (text: string): Set<string> => new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));

/** One sample's value, or undefined. */
export const sampleValue = (samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
