import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Signature verification for webhook receivers (package export "turnout/webhooks"). Standalone
 * on purpose: a subscriber imports this file without the rest of the service.
 *
 *   verifyWebhook({ rawBody, header: req.headers['x-turnout-signature'], secret })
 *
 * returns true or throws a WebhookVerificationError whose `code` says why.
 */
export type WebhookVerificationCode = 'missing_header' | 'malformed_header' | 'timestamp_too_old' | 'timestamp_in_future' | 'no_matching_signature';

export class WebhookVerificationError extends Error {
  constructor(
    readonly code: WebhookVerificationCode,
    message: string,
  ) {
    super(message);
    this.name = 'WebhookVerificationError';
  }
}

export interface VerifyOptions {
  /** The request body exactly as received (a string or the raw bytes), before any JSON parsing. */
  rawBody: string | Buffer | Uint8Array;
  /** The X-Turnout-Signature header: `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`. */
  header: string | string[] | undefined | null;
  /** The endpoint's signing secret, or several (during your own rotation, say). */
  secret?: string;
  secrets?: string[];
  /** How old `t` may be, in seconds (default 300). Also the allowed clock skew into the future. */
  toleranceSeconds?: number;
  /** The current time (tests). */
  now?: Date | number;
}

export function verifyWebhook(o: VerifyOptions): true {
  const header = Array.isArray(o.header) ? o.header[0] : o.header;
  if (!header) throw new WebhookVerificationError('missing_header', 'The X-Turnout-Signature header is missing.');
  let t: number | null = null;
  const sigs: Buffer[] = [];
  for (const part of header.split(',')) {
    const [k, v] = [part.slice(0, part.indexOf('=')).trim(), part.slice(part.indexOf('=') + 1).trim()];
    if (k === 't' && /^\d+$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) sigs.push(Buffer.from(v, 'hex'));
  }
  if (t === null || sigs.length === 0)
    throw new WebhookVerificationError('malformed_header', 'X-Turnout-Signature must look like t=<unix seconds>,v1=<hex>.');
  const tolerance = o.toleranceSeconds ?? 300;
  const now = Math.floor((o.now === undefined ? Date.now() : typeof o.now === 'number' ? o.now : o.now.getTime()) / 1000);
  if (now - t > tolerance) throw new WebhookVerificationError('timestamp_too_old', `The signature is ${now - t} s old, more than the ${tolerance} s tolerance.`);
  if (t - now > tolerance) throw new WebhookVerificationError('timestamp_in_future', `The signature is dated ${t - now} s in the future.`);
  const secrets = [...(o.secret !== undefined ? [o.secret] : []), ...(o.secrets ?? [])];
  if (secrets.length === 0) throw new TypeError('verifyWebhook needs secret or secrets');
  const body = typeof o.rawBody === 'string' ? Buffer.from(o.rawBody, 'utf8') : Buffer.from(o.rawBody);
  let ok = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
    // Every candidate is compared, in constant time, so timing says nothing about which matched.
    for (const s of sigs) if (timingSafeEqual(expected, s)) ok = true;
  }
  if (!ok) throw new WebhookVerificationError('no_matching_signature', 'No v1 signature matches the body with the given secret(s).');
  return true;
}
