import { readFileSync } from 'node:fs';

/**
 * What a SQLite database's WAL holds, read from its wal-index (the `-shm` file) without opening a
 * connection, so reading it neither checkpoints nor takes a lock. The header is SQLite's (wal.c),
 * in the machine's byte order: mxFrame, the WAL's last valid frame, at byte 16; nBackfill, the
 * frames copied into the database file, at byte 96.
 */
export function walIndex(databaseFile: string): { frames: number; copied: number } {
  const header = readFileSync(`${databaseFile}-shm`).subarray(0, 100);
  return { frames: header.readUInt32LE(16), copied: header.readUInt32LE(96) };
}
