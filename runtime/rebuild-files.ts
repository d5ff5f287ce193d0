import { closeSync, fsync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';

/**
 * Syncs a file written without syncs while it is still being written, on libuv's pool: what is
 * on disk by the end need not be written then, so the disk works beside the CPU instead of after it.
 */
export class Flusher {
  private readonly fd: number;
  private running: Promise<void> | null = null;

  constructor(file: string) {
    this.fd = openSync(file, 'r');
  }

  /** Starts a sync unless one runs. A failing one is not told: the last sync (syncPath) fails the same way. */
  kick(): void {
    this.running ??= new Promise<void>((resolve) => fsync(this.fd, () => resolve())).then(() => {
      this.running = null;
    });
  }

  async close(): Promise<void> {
    await this.running;
    closeSync(this.fd);
  }
}

/** A database file and whatever SQLite keeps beside it. */
export function removeDatabase(file: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(file + suffix, { force: true });
}

/**
 * Moves the finished file over the live one. The live one's WAL goes first: left beside the new
 * file it would be read as the new file's. A crash in between leaves the old file without its
 * last transactions, still consistent: its checkpoints are as old as its rows, and those events are projected again.
 */
export function replaceDatabase(from: string, to: string): void {
  for (const suffix of ['-wal', '-shm', '-journal']) rmSync(to + suffix, { force: true });
  renameSync(from, to);
  syncPath(path.dirname(to));
}

/** Everything written to a file (or a directory's entries) on disk before this returns. */
export function syncPath(file: string): void {
  const fd = openSync(file, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
