/*
 * The entry module of the read models' inline step (projections/engine/inline.ts), which the
 * log's writer thread imports as the port's InlineStepModule (eventlog/port.ts): it opens the
 * thread's connections and the product's projectors. It lives here, not in the engine, because
 * the projector set includes the change feed's table (dispatcher/).
 */
import type { InlineStepModule, OpenInlineStep } from '../eventlog/port.js';
import { openLogReader } from '../eventlog/sqlite-file.js';
import { type InlineSettings, inlineStep } from '../projections/engine/inline.js';
import { SqliteReadCore } from '../projections/store/sqlite-core.js';
import { forThread, loadProjectors, threadModule } from './thread-projectors.js';

/** This module as the log's inline step. */
export function inlineProjection(settings: InlineSettings): InlineStepModule {
  const { url, register } = threadModule(import.meta.url);
  return { module: url, register, options: forThread(url, settings) };
}

/** Called on the writer thread once the projector thread has laid the read database out. */
export const open = (async (settings: InlineSettings) => {
  const log = openLogReader(settings.logFile);
  const core = new SqliteReadCore(settings.readFile, { laidOutElsewhere: true });
  const projectors = await loadProjectors(settings.projectorsModule, { db: core.db, log });
  return inlineStep(core, projectors, log, () => {
    core.close();
    log.close();
  }, settings.keyMark);
}) satisfies OpenInlineStep;
