import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withoutRecipient } from '../../commands/notifications/sender.js';
import { FileTransport } from '../../commands/notifications/transport.js';
import { scrubMail, scrubText } from '../../runtime/erasure-redact.js';
import { tempDirs } from '../support/temp-dirs.js';

const tempDir = tempDirs('turnout-erasure-mail-');

describe("an erased person's address in the mail Turnout keeps (decisions.md §17)", () => {
  it('is scrubbed from the mail files in any case: the composer writes the domain in lower case', async () => {
    const dir = path.join(tempDir(), 'outbox');
    const transport = new FileTransport(dir);
    await transport.send({ id: 'n-1', from: 'turnout@example.org', to: 'MkUpper@Example.ORG', subject: 'Signed up', text: 'Thank you.' });
    await transport.send({ id: 'n-2', from: 'turnout@example.org', to: 'kept@example.org', subject: 'Signed up', text: 'Thank you.' });
    await transport.close();
    const mail = (id: string) => readFileSync(path.join(dir, `${id}.eml`), 'utf8');
    // What the composer wrote: the address as given no longer appears, in a form a plain search misses.
    expect(mail('n-1')).not.toContain('MkUpper@Example.ORG');
    expect(mail('n-1').toLowerCase()).toContain('mkupper@example.org');
    await scrubMail(dir, ['MkUpper@Example.ORG']);
    expect(mail('n-1').toLowerCase()).not.toContain('mkupper');
    expect(mail('n-1')).toContain('[erased]');
    expect(mail('n-2')).toContain('kept@example.org');
  });

  it("leaves every other mail file whole, whatever the person's short values (a state's code, an initial)", async () => {
    // After the review of bea9334: scrubbed in any case inside words, "IN" made "text/pla[erased]".
    const dir = path.join(tempDir(), 'outbox');
    const transport = new FileTransport(dir);
    await transport.send({ id: 'n-9', from: 'turnout@example.org', to: 'kept@example.org', subject: "You're signed up: Food drive", text: 'Thank you for signing up.\n\nTask: Food drive\nWhere: Indianapolis, IN' });
    await transport.close();
    const file = path.join(dir, 'n-9.eml');
    const before = readFileSync(file, 'utf8');
    await scrubMail(dir, ['IN', 'A', 'Food', 'gone@example.org']);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('replaces the longest value first: a first name inside the e-mail that starts with it leaves no part of the e-mail', () => {
    expect(scrubText(['Vic', 'vic@example.org', 'IN'])('550 <VIC@EXAMPLE.ORG>: Vic IN Indiana')).toBe('550 <[erased]>: [erased] IN Indiana');
  });

  it("leaves another person's address that holds the erased one, and finds it at the end of a sentence", async () => {
    expect(scrubText(['ann@example.org'])('To: mary-ann@example.org, ann@example.org.uk, Mary.Ann@example.org; Ann@Example.org.')).toBe(
      'To: mary-ann@example.org, ann@example.org.uk, Mary.Ann@example.org; [erased].',
    );
    const dir = path.join(tempDir(), 'outbox');
    const transport = new FileTransport(dir);
    await transport.send({ id: 'n-7', from: 'turnout@example.org', to: 'mary-ann@example.org', subject: 'Signed up', text: 'Thank you.' });
    await transport.close();
    const before = readFileSync(path.join(dir, 'n-7.eml'), 'utf8');
    await scrubMail(dir, ['ann@example.org']);
    expect(readFileSync(path.join(dir, 'n-7.eml'), 'utf8')).toBe(before);
  });

  it('leaves other files and other values alone', async () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'a.eml'), 'To: someone@example.org\n');
    writeFileSync(path.join(dir, 'b.txt'), 'To: gone@example.org\n');
    await scrubMail(dir, ['gone@example.org']);
    expect(readFileSync(path.join(dir, 'a.eml'), 'utf8')).toBe('To: someone@example.org\n');
    expect(readFileSync(path.join(dir, 'b.txt'), 'utf8')).toBe('To: gone@example.org\n');
  });

  it("is never kept in a refused message's error: a mail server's refusal names the recipient", () => {
    const refusal = '550 5.1.1 <MkRefused@example.org>: Recipient address rejected: user mkrefused unknown';
    expect(withoutRecipient(refusal, 'MkRefused@Example.ORG')).toBe('550 5.1.1 <the recipient>: Recipient address rejected: user the recipient unknown');
    expect(withoutRecipient('connect ECONNREFUSED 127.0.0.1:25', 'a@example.org')).toBe('connect ECONNREFUSED 127.0.0.1:25');
    // A short local part goes where it stands alone, not inside a word ("unable").
    expect(withoutRecipient('550 <ab@example.org> rejected: unable to relay', 'ab@example.org')).toBe('550 <the recipient> rejected: unable to relay');
    expect(withoutRecipient('anything', null)).toBe('anything');
    // Where it stands alone: the same letters inside a word are another word's.
    expect(withoutRecipient('550 mailbox ann unknown: cannot deliver', 'ann@example.org')).toBe('550 mailbox the recipient unknown: cannot deliver');
  });
});
