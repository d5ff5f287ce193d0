import { closeSync, existsSync, fsync, fsyncSync, openSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { READ_MODELS_FILE } from './read-models.js';

/**
 * Syncs a file written without syncs while it is still being written, on libuv's pool: what is
 * on disk by the end need not be written then, so the disk works beside the CPU instead of after it.
 */
export class Flusher {
  private readonly fd: number;
  private running: Promise<void> | null = null;
  /** One more sync asked for while one runs (flushWritten). */
  private again = false;

  constructor(file: string) {
    this.fd = openSync(file, 'r');
  }

  /** Starts a sync unless one runs. A failing one is not told: the last sync (syncPath) fails the same way. */
  kick(): void {
    this.running ??= this.syncs();
  }

  /** A sync of everything written so far: one more after the one running, which may have begun before the latest writes. */
  flushWritten(): void {
    if (this.running) this.again = true;
    else this.kick();
  }

  private async syncs(): Promise<void> {
    do {
      this.again = false;
      await new Promise<void>((resolve) => fsync(this.fd, () => resolve()));
    } while (this.again);
    this.running = null;
  }

  async close(): Promise<void> {
    await this.running;
    closeSync(this.fd);
  }
}

/** A database file's name and the suffixes of what SQLite keeps beside it. */
const SQLITE_FILES = ['', '-wal', '-shm', '-journal'];

/** A database file and whatever SQLite keeps beside it. */
export function removeDatabase(file: string): void {
  for (const suffix of SQLITE_FILES) rmSync(file + suffix, { force: true });
}

/**
 * Moves the finished file over the live one. The live one's WAL goes first: left beside the new
 * file it would be read as the new file's. A crash in between leaves the old file without its
 * last transactions, still consistent: its checkpoints are as old as its rows, and those events are projected again.
 */
export function replaceDatabase(from: string, to: string): void {
  for (const suffix of SQLITE_FILES.slice(1)) rmSync(to + suffix, { force: true });
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

/** The files a rebuild writes beside the live read models: the new file, and its second and search threads' own. */
export const rebuildFiles = (live: string): [building: string, apart: string, search: string] => [`${live}.rebuild`, `${live}.rebuild-apart`, `${live}.rebuild-search`];

/**
 * Removes what a rebuild killed half-way left beside the live read models: copies of every row,
 * personal values included, that an erasure must not leave behind (decisions.md §17). Only a
 * process that holds the data dir may: a rebuild holds it while it runs.
 */
export function removeRebuildLeftovers(dataDir: string, report: (message: string) => void): void {
  for (const file of rebuildFiles(path.join(dataDir, READ_MODELS_FILE))) {
    if (!SQLITE_FILES.some((suffix) => existsSync(file + suffix))) continue;
    removeDatabase(file);
    report(`read models: removed ${path.basename(file)}, left by a rebuild that did not finish`);
  }
}
