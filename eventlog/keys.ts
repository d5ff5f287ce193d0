import Database from 'better-sqlite3';
import { Worker } from 'node:worker_threads';
import { truncateWal } from './erase.js';
import { Sealer } from './sealing.js';
import { THREAD_EXEC_ARGV, ThreadCalls } from './thread-calls.js';

/**
 * The per-constituent data keys of decisions.md §17: where the log cannot be rewritten
 * (EventStoreDB), a constituent's personal fields are sealed under a random key of its own, and
 * erasure destroys that key (crypto-shredding). Keys are kept wrapped by the main key, never in
 * plaintext. A destroyed key leaves a tombstone, so it is never made again for the same subject.
 *
 * One port, two adapters: this SQLite file in the data dir, and a MongoDB collection on the
 * production stack (keys-mongo.ts); tests/commands/keystore.contract.ts holds both to the same rules.
 */
export interface KeyStore {
  /**
   * Each subject's key, made on first use (`create`); null when it was destroyed, or (without
   * `create`) never made. Racing first uses agree on one key. One read (and with `create` one
   * write) for the whole list, so a page of events or a burst of new constituents costs one
   * round trip, not one per subject.
   */
  keysFor(subjects: readonly string[], create: boolean): Promise<Map<string, Buffer | null>>;
  /** One subject's key, as keysFor. */
  keyFor(subject: string, create: boolean): Promise<Buffer | null>;
  /** Destroys the subject's key for good (idempotent); a subject with none gets a tombstone. */
  destroy(subject: string): Promise<void>;
  close(): Promise<void>;
}

/** The wrapped form a store keeps: the key sealed by the main key, bound to its subject. */
export const wrapKey = (main: Sealer, subject: string, key: Buffer) => main.sealBytes(key, `data-key:${subject}`).toString('base64');
export const unwrapKey = (main: Sealer, subject: string, wrapped: string) => main.openBytes(Buffer.from(wrapped, 'base64'), `data-key:${subject}`);

/** The embedded key store: `<dataDir>/keys.sqlite` (or memory), secure_delete on, its WAL truncated after each destruction. */
export class SqliteKeyStore implements KeyStore {
  private readonly db: Database.Database;
  private readonly stmt;
  /** Where keys are made for a store in a file, started at the first batch of keys made (KeyThread). */
  private thread: KeyThread | null = null;

  constructor(
    private readonly file: string,
    private readonly main: Sealer,
  ) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('secure_delete = ON');
    this.db.exec('CREATE TABLE IF NOT EXISTS data_keys (subject TEXT PRIMARY KEY, wrapped TEXT, destroyed_at TEXT) WITHOUT ROWID');
    this.stmt = {
      many: this.db.prepare<[string], { subject: string; wrapped: string | null }>(
        'SELECT subject, wrapped FROM data_keys WHERE subject IN (SELECT value FROM json_each(?))',
      ),
      insert: this.db.prepare<[string, string]>('INSERT INTO data_keys (subject, wrapped) VALUES (?, ?)'),
      destroy: this.db.prepare<[string, string]>(
        'INSERT INTO data_keys (subject, wrapped, destroyed_at) VALUES (?, NULL, ?) ON CONFLICT (subject) DO UPDATE SET wrapped = NULL, destroyed_at = COALESCE(destroyed_at, excluded.destroyed_at)',
      ),
    };
  }

  /** Whether the store is a file, whose keys are made on its thread (KeyThread). */
  private get inFile(): boolean {
    return this.file !== ':memory:' && this.file !== '';
  }

  async keyFor(subject: string, create: boolean): Promise<Buffer | null> {
    return (await this.keysFor([subject], create)).get(subject) ?? null;
  }

  async keysFor(subjects: readonly string[], create: boolean): Promise<Map<string, Buffer | null>> {
    // A store in a file makes keys in a transaction that reads the rows already there first (on
    // its thread, once started): they are not read here before (a read of the 256 subjects of
    // each batch made ahead cost the main thread, which serves the API, about 1 µs a write).
    if (create && this.inFile) return this.created(subjects);
    const rows = this.stmt.many.all(JSON.stringify(subjects));
    if (create && rows.length < subjects.length) return this.created(subjects);
    return this.unwrapped(rows, new Map());
  }

  private unwrapped(rows: Array<{ subject: string; wrapped: string | null }>, made: Map<string, Buffer | null>): Map<string, Buffer | null> {
    for (const r of rows) if (!made.has(r.subject)) made.set(r.subject, r.wrapped ? unwrapKey(this.main, r.subject, r.wrapped) : null);
    return made;
  }

  private batch: Array<{ subjects: readonly string[]; done: (keys: Map<string, Buffer | null>) => void; failed: (err: unknown) => void }> = [];
  private closed = false;

  /**
   * New keys asked for in one turn are committed in one transaction: one fsync for every new
   * constituent of a burst of writes, as the log's own group commit, rather than one each.
   */
  private created(subjects: readonly string[]): Promise<Map<string, Buffer | null>> {
    return new Promise((done, failed) => {
      if (!this.batch.length) setImmediate(() => this.flush());
      this.batch.push({ subjects, done, failed });
    });
  }

  private flush(): void {
    const batch = this.batch;
    this.batch = [];
    if (this.closed) {
      for (const b of batch) b.failed(new Error('the key store is closed'));
      return;
    }
    if (this.inFile) {
      // The thread takes a moment to start: the batches until it is ready are made here.
      this.thread ??= new KeyThread(this.file, this.main);
      // A thread that stopped leaves the work here, as before it was ready.
      if (this.thread.ready && !this.thread.failure) return this.flushOnThread(batch, this.thread);
    }
    this.flushHere(batch);
  }

  private flushHere(batch: SqliteKeyStore['batch']): void {
    try {
      // Immediate: another process on the file cannot slip its key in between the read and the insert.
      const made = this.db
        .transaction(() => {
          const out = new Map<string, Buffer | null>();
          const subjects = [...new Set(batch.flatMap((b) => b.subjects))];
          const rows = this.stmt.many.all(JSON.stringify(subjects));
          const known = new Set(rows.map((r) => r.subject));
          for (const subject of subjects) {
            if (known.has(subject)) continue;
            const key = Sealer.newKey();
            this.stmt.insert.run(subject, wrapKey(this.main, subject, key));
            // The key just made is already in hand: no need to read and unwrap it again.
            out.set(subject, key);
          }
          return this.unwrapped(rows, out);
        })
        .immediate();
      for (const b of batch) b.done(made);
    } catch (err) {
      for (const b of batch) b.failed(err);
    }
  }

  /**
   * The batch's keys made on the key store's thread: generating, wrapping and inserting 512 keys
   * and the commit's fsync took the main thread about 10 µs a key of CPU and a pause at each
   * commit, while it serves the API. What the thread found already made comes back wrapped and
   * is unwrapped here.
   */
  private flushOnThread(batch: SqliteKeyStore['batch'], thread: KeyThread): void {
    const subjects = [...new Set(batch.flatMap((b) => b.subjects))];
    thread.make(subjects).then(
      ({ rows, made, keys: bytes }) => {
        const out = new Map<string, Buffer | null>();
        made.forEach((subject, i) => out.set(subject, Buffer.from(bytes.buffer, bytes.byteOffset + i * 32, 32)));
        const keys = this.unwrapped(rows, out);
        for (const b of batch) b.done(keys);
      },
      (err: unknown) => {
        // The thread stopped under the batch: made here instead. What it committed before it
        // stopped is found in the file and used, so no subject gets a second key.
        if (thread.failure && !this.closed) return this.flushHere(batch);
        for (const b of batch) b.failed(err);
      },
    );
  }

  async destroy(subject: string): Promise<void> {
    this.stmt.destroy.run(subject, new Date().toISOString());
    await truncateWal(this.db);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.thread?.close();
    this.db.close();
  }
}

/** What the thread answers: the rows it found already there, and the subjects whose keys it made, their keys in order in one block. */
type Made = { rows: Array<{ subject: string; wrapped: string | null }>; made: string[]; keys: Uint8Array };

/** The program of the key store's thread: a module file beside this one, JavaScript as the log's writer thread is (sqlite-writer.ts). */
const KEY_THREAD = new URL('./keys-thread.js', import.meta.url);

/** The main thread's side of the key store's thread: a batch of subjects sent, its keys answered. It keeps the process alive only while a batch is in flight. */
class KeyThread {
  private readonly calls: ThreadCalls<Made>;

  constructor(file: string, main: Sealer) {
    const worker = new Worker(KEY_THREAD, { workerData: { file, main: main.keyObject() }, name: 'turnout-key-store', execArgv: THREAD_EXEC_ARGV });
    this.calls = new ThreadCalls<Made>(worker, {
      answer: (m) => ({ rows: (m.rows as Made['rows'] | undefined) ?? [], made: (m.made as Made['made'] | undefined) ?? [], keys: (m.keys as Uint8Array | undefined) ?? new Uint8Array(0) }),
      failed: (reason) => new Error(reason),
      stopped: (err) => new Error(`the key store's thread stopped (${err.message})`),
    });
  }

  /** The thread itself (the tests reach it to count its messages or end it). */
  get worker(): Worker {
    return this.calls.worker;
  }

  /** Whether the thread has opened the file and takes batches. */
  get ready(): boolean {
    return this.calls.ready;
  }

  /** Why the thread takes no more batches (it stopped), or null. */
  get failure(): Error | null {
    return this.calls.failure;
  }

  make(subjects: string[]): Promise<Made> {
    return this.calls.call({ subjects });
  }

  /** Lets the batches in flight finish, closes the thread's connection, and ends the thread. */
  close(): Promise<void> {
    return this.calls.close();
  }
}
