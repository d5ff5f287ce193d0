import { verifyStandardWebhook, verifyWebhook as verifySignature, WebhookVerificationError } from '@turnout/webhooks-verify';
import type { WebhookEnvelope } from './types.js';

export { WebhookVerificationError };

/** Request headers as Node (`req.headers`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined | null>;

export interface VerifyWebhookOptions {
  /** How old (or how far ahead) the signature's timestamp may be, in seconds (default 300). */
  toleranceSeconds?: number;
}

function plainHeaders(headers: WebhookHeaders): Record<string, string | string[] | undefined | null> {
  const out: Record<string, string | string[] | undefined | null> = {};
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') (headers as Headers).forEach((v, k) => (out[k] = v));
  else for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}

/**
 * Checks a delivery's signature, the X-Turnout-Signature one or, when only those came, the
 * Standard Webhooks headers, with @turnout/webhooks-verify (the verifier Turnout itself signs
 * with), and returns the envelope typed by its `type`. Throws WebhookVerificationError, with a
 * `code` saying why, when the signature does not hold. Pass the body exactly as received, before
 * any JSON parsing.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string | readonly string[], options: VerifyWebhookOptions = {}): WebhookEnvelope {
  const h = plainHeaders(headers);
  const secrets = typeof secret === 'string' ? [secret] : [...secret];
  const { toleranceSeconds } = options;
  if (h['x-turnout-signature'] !== undefined && h['x-turnout-signature'] !== null) verifySignature({ rawBody, header: h['x-turnout-signature'], secrets, toleranceSeconds });
  else if (h['webhook-signature'] !== undefined && h['webhook-signature'] !== null) verifyStandardWebhook({ rawBody, headers: h, secrets, toleranceSeconds });
  else throw new WebhookVerificationError('missing_header', 'Neither X-Turnout-Signature nor webhook-signature was sent: pass the request\u2019s headers as received');
  const text = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  return JSON.parse(text) as WebhookEnvelope;
}
