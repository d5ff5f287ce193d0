import type { EventMetadata, Source } from '../domain/shared/events.js';

/** Who is writing, and when: the metadata every event of a command carries. */
export interface WriteContext {
  team: number;
  source: Source;
  keyName: string | null;
  correlationId: string;
  now: Date;
}

export const metadataOf = (ctx: WriteContext): EventMetadata => ({
  team: ctx.team,
  source: ctx.source,
  keyName: ctx.keyName,
  correlationId: ctx.correlationId,
  at: ctx.now.toISOString(),
});
