import { chmodSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface MailMessage {
  /** The notification id: also the message's idempotency key (Message-ID, file name). */
  id: string;
  from: string;
  to: string;
  subject: string;
  text: string;
}

/** The mail transport port: SMTP in production, files on disk embedded, memory in tests. */
export interface MailTransport {
  readonly name: string;
  send(message: MailMessage): Promise<void>;
  /**
   * Whether a message handed over before a crash arrived: true or false when the transport can
   * tell, null when it cannot (SMTP), in which case the sender does not risk a duplicate.
   */
  wasDelivered(id: string): Promise<boolean | null>;
  close(): Promise<void>;
}

/**
 * nodemailer is loaded with the first mail, not at the start: a start sends none before it is
 * ready, and loading it is CPU taken from the start (decisions.md §13: /readyz 200 within 3 s).
 */
const nodemailer = async () => (await import('nodemailer')).default;
const composer = async () => (await nodemailer()).createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
const smtp = async (url: string) => (await nodemailer()).createTransport(url);

const messageId = (id: string) => `<notification-${id}@turnout>`;
const safeName = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, '_');

/**
 * The embedded transport: each message is an RFC 5322 .eml file under `<dataDir>/outbox/`. It is
 * written to a temporary name and renamed, so the file exists exactly when the message was
 * "sent", and a sender recovering from a crash can ask.
 */
export class FileTransport implements MailTransport {
  readonly name = 'file';
  private composer: ReturnType<typeof composer> | null = null;
  constructor(readonly dir: string) {
    // Mail to constituents is private: the outbox as the data dir, 0700 and its files 0600,
    // whatever the umask (which can only narrow the modes given at creation).
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
  }
  async send(m: MailMessage): Promise<void> {
    this.composer ??= composer();
    const info = await (await this.composer).sendMail({ from: m.from, to: m.to, subject: m.subject, text: m.text, messageId: messageId(m.id) });
    const file = path.join(this.dir, `${safeName(m.id)}.eml`);
    writeFileSync(file + '.tmp', info.message as Buffer, { mode: 0o600 });
    renameSync(file + '.tmp', file);
  }
  async wasDelivered(id: string): Promise<boolean> {
    return existsSync(path.join(this.dir, `${safeName(id)}.eml`));
  }
  async close(): Promise<void> {
    (await this.composer)?.close();
  }
}

/** SMTP through nodemailer (TURNOUT_SMTP_URL). The Message-ID is stable per notification. */
export class SmtpTransport implements MailTransport {
  readonly name = 'smtp';
  private readonly url: string;
  private transporter: ReturnType<typeof smtp> | null = null;
  constructor(url: string, timeoutMs = 30_000) {
    const u = new URL(url);
    u.searchParams.set('connectionTimeout', String(timeoutMs));
    u.searchParams.set('socketTimeout', String(timeoutMs));
    this.url = u.toString();
  }
  async send(m: MailMessage): Promise<void> {
    this.transporter ??= smtp(this.url);
    await (await this.transporter).sendMail({ from: m.from, to: m.to, subject: m.subject, text: m.text, messageId: messageId(m.id) });
  }
  async wasDelivered(): Promise<null> {
    return null;
  }
  async close(): Promise<void> {
    (await this.transporter)?.close();
  }
}

/** For tests and `:memory:` data dirs: keeps what was sent; `failNext` makes the next sends throw. */
export class MemoryTransport implements MailTransport {
  readonly name = 'memory';
  readonly sent: MailMessage[] = [];
  failNext = 0;
  async send(m: MailMessage): Promise<void> {
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('simulated transport failure');
    }
    this.sent.push(m);
  }
  async wasDelivered(id: string): Promise<boolean> {
    return this.sent.some((m) => m.id === id);
  }
  async close(): Promise<void> {}
}
