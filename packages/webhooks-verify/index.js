// Verifies Turnout's webhook signatures: the X-Turnout-Signature header (integration-api.md 6.5)
// and the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature) every
// delivery also carries. One file, no dependencies but node:crypto: install the package, or copy
// this file (and index.d.ts for the types).
import { createHmac, timingSafeEqual } from 'node:crypto';

/** @typedef {import('./index.js').WebhookVerificationCode} WebhookVerificationCode */
/** @typedef {import('./index.js').VerifyOptions} VerifyOptions */
/** @typedef {import('./index.js').VerifyStandardOptions} VerifyStandardOptions */
/** @typedef {import('./index.js').StandardWebhookHeaders} StandardWebhookHeaders */

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
  checkTimestamp(t, o);
  const body = bodyBytes(o.rawBody);
  const keys = secretsOf(o, 'verifyWebhook').map((s) => Buffer.from(s, 'utf8'));
  if (!anyMatches(keys, (key) => createHmac('sha256', key).update(`${t}.`).update(body).digest(), sigs))
    throw new WebhookVerificationError('no_matching_signature', 'No v1 signature matches the body with the given secret(s).');
  return true;
}

/**
 * The Standard Webhooks headers for `body` (standardwebhooks.com): `webhook-id` (the envelope id),
 * `webhook-timestamp` (unix seconds) and `webhook-signature`, one space-separated
 * `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` per secret, keyed with the base64 after
 * `whsec_`, the newest secret first. Turnout sends these beside X-Turnout-Signature.
 *
 * @param {string} id
 * @param {string | Uint8Array} body
 * @param {string[]} secrets
 * @param {number} t unix seconds
 * @returns {StandardWebhookHeaders}
 */
export function standardWebhookHeaders(id, body, secrets, t) {
  const sign = (/** @type {string} */ s) => `v1,${createHmac('sha256', standardKey(s)).update(`${id}.${t}.`).update(body).digest('base64')}`;
  return { 'webhook-id': id, 'webhook-timestamp': String(t), 'webhook-signature': secrets.map(sign).join(' ') };
}

/**
 * Checks a request's Standard Webhooks headers against the raw body and the endpoint's secret(s),
 * as the `standardwebhooks` libraries do. Returns true, or throws a WebhookVerificationError.
 *
 * @param {VerifyStandardOptions} o
 * @returns {true}
 */
export function verifyStandardWebhook(o) {
  /** @type {Record<string, string | undefined>} */
  const h = {};
  for (const [k, v] of Object.entries(o.headers)) h[k.toLowerCase()] = Array.isArray(v) ? v[0] : (v ?? undefined);
  const [id, ts, signature] = [h['webhook-id'], h['webhook-timestamp'], h['webhook-signature']];
  if (!id || !ts || !signature) throw new WebhookVerificationError('missing_header', 'The webhook-id, webhook-timestamp and webhook-signature headers are all needed.');
  if (!/^\d+$/.test(ts)) throw new WebhookVerificationError('malformed_header', 'webhook-timestamp must be unix seconds.');
  const sigs = signature
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'))
    .filter((b) => b.length === 32);
  if (sigs.length === 0) throw new WebhookVerificationError('malformed_header', 'webhook-signature must hold v1,<base64> entries, space-separated.');
  const t = Number(ts);
  checkTimestamp(t, o);
  const body = bodyBytes(o.rawBody);
  const keys = secretsOf(o, 'verifyStandardWebhook').map(standardKey);
  if (!anyMatches(keys, (key) => createHmac('sha256', key).update(`${id}.${t}.`).update(body).digest(), sigs))
    throw new WebhookVerificationError('no_matching_signature', 'No v1 signature matches the body with the given secret(s).');
  return true;
}

/** A Standard Webhooks key: the bytes of the base64 after `whsec_`. */
function standardKey(/** @type {string} */ secret) {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  if (key.length === 0) throw new TypeError('The secret must be whsec_ followed by base64.');
  return key;
}

/** @param {number} t @param {{toleranceSeconds?: number, now?: Date | number}} o */
function checkTimestamp(t, o) {
  const tolerance = o.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const now = Math.floor((o.now === undefined ? Date.now() : typeof o.now === 'number' ? o.now : o.now.getTime()) / 1000);
  if (now - t > tolerance) throw new WebhookVerificationError('timestamp_too_old', `The signature is ${now - t} s old, more than the ${tolerance} s tolerance.`);
  if (t - now > tolerance) throw new WebhookVerificationError('timestamp_in_future', `The signature is dated ${t - now} s in the future.`);
}

const bodyBytes = (/** @type {string | Uint8Array} */ raw) => (typeof raw === 'string' ? Buffer.from(raw, 'utf8') : Buffer.from(raw));

/** @param {{secret?: string, secrets?: string[]}} o @param {string} caller */
function secretsOf(o, caller) {
  const secrets = [...(o.secret !== undefined ? [o.secret] : []), ...(o.secrets ?? [])];
  if (secrets.length === 0) throw new TypeError(`${caller} needs secret or secrets`);
  return secrets;
}

/**
 * Whether any signature is the MAC of any key. Every candidate is compared, in constant time, so
 * timing says nothing about which matched.
 * @param {Buffer[]} keys @param {(key: Buffer) => Buffer} mac @param {Buffer[]} sigs
 */
function anyMatches(keys, mac, sigs) {
  let ok = false;
  for (const key of keys) {
    const expected = mac(key);
    for (const s of sigs) if (s.length === expected.length && timingSafeEqual(expected, s)) ok = true;
  }
  return ok;
}
