import type { Tracing } from './tracing-port.js';

/**
 * decisions.md §15: tracing only when OTEL_EXPORTER_OTLP_ENDPOINT (or its traces-only variant) is
 * set, and then the SDK is loaded; unset, nothing of it is even imported, and every hook that
 * would take a Tracing is left out (null), so the hot path runs no tracing code at all.
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env): Promise<Tracing | null> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return null;
  if (env.OTEL_SDK_DISABLED === 'true') return null;
  const { openTracing } = await import('./tracing.js');
  return openTracing(process.env.npm_package_version ?? '0.1.0');
}
