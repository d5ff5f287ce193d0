// Verifies Turnout's webhook signatures (integration-api.md 6.5). One file, no dependencies but
// node:crypto: install the package, or copy this file (and index.d.ts for the types).
import { createHmac, timingSafeEqual } from 'node:crypto';

/** @typedef {import('./index.js').WebhookVerificationCode} WebhookVerificationCode */
/** @typedef {import('./index.js').VerifyOptions} VerifyOptions */

/** Why a webhook was refused: `code` is stable, `message` says what to check. */
export class WebhookVerificationError extends Error {
  /**
   * @param {WebhookVerificationCode} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    /** @readonly */
    this.code = code;
    this.name = 'WebhookVerificationError';
  }
}

/** The default tolerance: how old `t` may be, and how far in the future, in seconds. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/**
 * The X-Turnout-Signature header for `body`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<body>">`, one v1 per secret (during a rotation's overlap Turnout signs with both, the
 * newest first). Turnout signs with this; a subscriber can use it to test its own receiver.
 *
 * @param {string | Uint8Array} body
 * @param {string[]} secrets
 * @param {number} t unix seconds
 * @returns {string}
 */
export function signatureHeader(body, secrets, t) {
  return [`t=${t}`, ...secrets.map((s) => `v1=${createHmac('sha256', s).update(`${t}.`).update(body).digest('hex')}`)].join(',');
}

/**
 * Checks a request's X-Turnout-Signature against the raw body and the endpoint's secret(s).
 * Returns true, or throws a WebhookVerificationError whose `code` says why.
 *
 * @param {VerifyOptions} o
 * @returns {true}
 */
export function verifyWebhook(o) {
  const header = Array.isArray(o.header) ? o.header[0] : o.header;
  if (!header) throw new WebhookVerificationError('missing_header', 'The X-Turnout-Signature header is missing.');
  /** @type {number | null} */
  let t = null;
  /** @type {Buffer[]} */
  const sigs = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    const [k, v] = [part.slice(0, eq).trim(), part.slice(eq + 1).trim()];
    if (k === 't' && /^\d+$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) sigs.push(Buffer.from(v, 'hex'));
  }
  if (t === null || sigs.length === 0)
    throw new WebhookVerificationError('malformed_header', 'X-Turnout-Signature must look like t=<unix seconds>,v1=<hex>.');
  const tolerance = o.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
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
