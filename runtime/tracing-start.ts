import type { Tracing } from './tracing-port.js';

/**
 * decisions.md §15: tracing only when OTEL_EXPORTER_OTLP_ENDPOINT (or its traces-only variant) is
 * set, and then the SDK is loaded; unset, nothing of it is even imported, and every hook that
 * would take a Tracing is left out (null), so the hot path runs no tracing code at all. The
 * standard switches that turn it off are honoured too (OTEL_SDK_DISABLED, OTEL_TRACES_EXPORTER=none).
 */
export async function startTracing(env: NodeJS.ProcessEnv = process.env, warn: (message: string) => void = (m) => console.warn(m)): Promise<Tracing | null> {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT && !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return null;
  if (env.OTEL_SDK_DISABLED === 'true' || env.OTEL_TRACES_EXPORTER === 'none') return null;
  // The exporter speaks OTLP over HTTP with JSON bodies, which every collector takes on 4318.
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  if (protocol && protocol !== 'http/json') warn(`tracing: OTLP protocol "${protocol}" is not supported; traces are sent as http/json`);
  const { openTracing } = await import('./tracing.js');
  return openTracing(process.env.npm_package_version ?? '0.1.0', { warn });
}
