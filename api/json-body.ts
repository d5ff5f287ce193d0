import type { FastifyInstance } from 'fastify';
import { TransportError } from './transport.js';

/** Line and column (both from 1) of a character offset in a text. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1].length + 1 };
}

/**
 * Where JSON.parse stopped. V8 gives "at position N" for most faults; for an unexpected token or
 * literal it quotes the text instead, so the offset is found by scanning to the first character
 * that cannot continue a JSON text.
 */
export function syntaxErrorOffset(text: string, err: unknown): number {
  const m = /at position (\d+)/.exec(err instanceof Error ? err.message : '');
  if (m) return Number(m[1]);
  if (err instanceof Error && /end of JSON input/.test(err.message)) return text.length;
  return scanToFault(text);
}

/** A JSON scanner that only finds the offset of the first fault (the text is known to be invalid). */
function scanToFault(s: string): number {
  let i = 0;
  const ws = () => {
    while (i < s.length && ' \t\n\r'.includes(s[i])) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string) => {
    for (const ch of word) if (s[i++] !== ch) (i--, fail());
  };
  const string = () => {
    i++; // opening quote
    while (i < s.length && s[i] !== '"') i += s[i] === '\\' ? 2 : 1;
    if (i >= s.length) fail();
    i++;
  };
  const value = (): void => {
    ws();
    const c = s[i];
    if (c === '{') {
      i++;
      ws();
      if (s[i] === '}') return void i++;
      for (;;) {
        ws();
        if (s[i] !== '"') fail();
        string();
        ws();
        if (s[i] !== ':') fail();
        i++;
        value();
        ws();
        if (s[i] === ',') i++;
        else if (s[i] === '}') return void i++;
        else fail();
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (s[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (s[i] === ',') i++;
        else if (s[i] === ']') return void i++;
        else fail();
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c !== undefined && /[-\d]/.test(c)) {
      const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(s.slice(i));
      if (!m) fail();
      i += m![0].length;
      return;
    }
    fail();
  };
  try {
    value();
    ws();
    return i;
  } catch (at) {
    return Math.min(at as number, s.length);
  }
}

/** The reason V8 gives, without the quoted body or its position (we say where ourselves). */
function reason(err: unknown): string {
  const text = err instanceof Error ? err.message : 'invalid JSON';
  return text
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/^./, (c) => c.toLowerCase());
}

/**
 * How deep a body may nest: far beyond any body of the API (a flat object of fields, some holding
 * a list), and shallow enough that code walking a body by recursion (the Idempotency-Key's
 * fingerprint, api/idempotency.ts) never runs out of stack.
 */
const MAX_DEPTH = 64;

/** Whether `value` nests objects or arrays deeper than `limit` levels; walked without recursion. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  // Nearly every body is an object of plain values: seen so, without the walk's allocations.
  if (limit >= 1 && value !== null && typeof value === 'object' && !Array.isArray(value) && !holdsObject(value as Record<string, unknown>)) return false;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

function holdsObject(value: Record<string, unknown>): boolean {
  for (const k in value) {
    const child = value[k];
    if (child !== null && typeof child === 'object') return true;
  }
  return false;
}

/**
 * The only body this API reads is JSON. JSON bodies go through Fastify's own parser (it refuses prototype-poisoning keys), but a syntax
 * error says where it is: line, column and character offset, so the sender can find it.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  // Fastify also reads text/plain bodies by default; this API takes JSON only (415 otherwise).
  app.removeContentTypeParser('text/plain');
  const secure = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    secure(request, body as string, (err: (Error & { code?: string }) | null, value?: unknown) => {
      // A body refused here is answered 400 without reaching the route's hooks: its text is kept
      // for an Idempotency-Key, which keeps that answer too (api/idempotency.ts).
      if (err || nestedDeeperThan(value, MAX_DEPTH)) request.refusedBody = body as string;
      if (!err && nestedDeeperThan(value, MAX_DEPTH))
        return done(new TransportError('invalid_json', `The body nests objects or arrays more than ${MAX_DEPTH} levels deep; no body of this API needs more.`), undefined);
      if (err?.code !== 'FST_ERR_CTP_INVALID_JSON_BODY') return done(err, value);
      const text = body as string;
      try {
        JSON.parse(text);
      } catch (syntax) {
        const offset = syntaxErrorOffset(text, syntax);
        const { line, column } = lineAndColumn(text, offset);
        return done(new TransportError('invalid_json', `The body is not valid JSON: ${reason(syntax)} at line ${line}, column ${column} (character ${offset}); check its syntax there.`), undefined);
      }
      // Valid JSON that the secure parser refused: a prototype-poisoning key.
      done(new TransportError('invalid_json', 'The body has a "__proto__" or "constructor.prototype" key, which is refused; remove it.'), undefined);
    });
  });
}
