import type { Worker } from 'node:worker_threads';
import { getNumberFromEnv } from '@opentelemetry/core';
import { startModuleThread } from './thread-projectors.js';
import type { ExportThreadSettings, FromExportThread, ToExportThread } from './tracing-wire.js';

/** Where finished spans go: the export thread, or (the cost bench) anywhere else. */
export interface SpanSink {
  /** A finished span's OTLP JSON (tracing-otlp.ts spanJson), one line. */
  add(line: string): void;
  /** Everything added so far exported. */
  flush(): Promise<void>;
  /** Flushed, then stopped. */
  close(): Promise<void>;
}

/**
 * The main thread's side of the export thread (tracing-thread.ts): finished spans are kept as
 * lines of text and posted in batches, one string each, one message per OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans (512)
 * or per second at most (sooner when OTEL_BSP_SCHEDULE_DELAY is shorter), so what a span costs the
 * event loop is its line and a share of one copy. The thread batches them again as
 * the standard BatchSpanProcessor does, and exports.
 *
 * Tracing must never fail the service: if the thread cannot start or dies, spans are dropped,
 * once said on stderr.
 */
export function exportThread(version: string, warn: (message: string) => void = (m) => console.warn(m)): SpanSink {
  const batchSize = getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512;
  const delay = Math.min(1_000, getNumberFromEnv('OTEL_BSP_SCHEDULE_DELAY') ?? 5_000);
  let worker: Worker | null = startModuleThread(import.meta.url, 'tracing-thread', { workerData: { version } satisfies ExportThreadSettings, name: 'turnout-tracing' });
  worker.unref();
  let buffer: string[] = [];
  let timer: NodeJS.Timeout | null = null;
  let next = 0;
  let closing = false;
  const waiting = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();

  const lost = (why: string) => {
    if (!worker) return;
    worker = null;
    buffer = [];
    if (!closing) warn(`tracing: ${why}; spans are no longer exported`);
    for (const w of waiting.values()) w.resolve();
    waiting.clear();
  };
  worker.on('error', (err) => lost(`the export thread failed (${err.message})`));
  worker.on('exit', (code) => lost(`the export thread exited (${code})`));
  worker.on('message', (m: FromExportThread) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (!waiting.size) worker?.unref();
    if (m.error) w?.reject(new Error(m.error));
    else w?.resolve();
  });

  const post = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (!buffer.length || !worker) return;
    const lines = buffer.join('\n');
    buffer = [];
    worker.postMessage({ type: 'spans', lines } satisfies ToExportThread);
  };
  const ask = (type: 'flush' | 'close') => {
    post();
    if (!worker) return Promise.resolve();
    const id = next++;
    const answered = new Promise<void>((resolve, reject) => waiting.set(id, { resolve, reject }));
    worker.ref();
    worker.postMessage({ type, id } satisfies ToExportThread);
    return answered;
  };

  return {
    add(span) {
      if (!worker) return;
      buffer.push(span);
      if (buffer.length >= batchSize) post();
      else if (!timer) (timer = setTimeout(post, delay)).unref();
    },
    flush: () => ask('flush'),
    async close() {
      const w = worker;
      closing = true;
      await ask('close');
      worker = null;
      await w?.terminate();
    },
  };
}
