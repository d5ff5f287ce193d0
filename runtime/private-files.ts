import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';

/**
 * The data dir holds the event log, the main key that seals the webhook signing secrets kept in
 * the log (main-key), the admin token and the outbox: only its owner may read it, whatever the umask.
 *
 * A mode given when creating is masked by the umask, which only ever removes bits, so 0700/0600
 * at creation are never widened; the chmod afterwards also narrows a dir or file that an older
 * version created 0755/0644.
 */
export function secureDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/**
 * Creates `file` empty, mode 0600, if it does not exist, else narrows it to 0600. Call it before
 * SQLite opens a database: SQLite creates a new file 0644, but creates its -wal and -shm with the
 * mode of the database file, so a database created here keeps all three private. Existing
 * -wal/-shm files are narrowed too.
 */
export function privateFile(file: string, options: { sqlite?: boolean } = {}): void {
  closeSync(openSync(file, 'a', 0o600));
  chmodSync(file, 0o600);
  if (options.sqlite) for (const suffix of ['-wal', '-shm', '-journal']) if (existsSync(file + suffix)) chmodSync(file + suffix, 0o600);
}
