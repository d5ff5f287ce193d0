import { signatureHeader, standardWebhookHeaders } from '../packages/webhooks-verify/index.js';

/**
 * Spec 6.5: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, one v1 per signing
 * secret, the newest first (decisions.md 7: during a rotation's overlap both secrets sign); and
 * the Standard Webhooks headers beside it (decisions.md 12). Signing and verifying live together
 * in the subscriber's package, so they cannot disagree.
 */
export { signatureHeader, standardWebhookHeaders };

/** What one attempt's headers are made from: plain data, so a sender on another thread can sign. */
export interface Signing {
  eventId: string;
  eventType: string;
  /** The attempt's X-Turnout-Delivery (worker.ts deliveryId). */
  delivery: string;
  /** The endpoint's live signing secrets, the newest first. */
  secrets: string[];
  /** Unix seconds. */
  t: number;
  /** The attempt span's W3C traceparent, sent as a header of its own when tracing is on (decisions.md §15). */
  traceparent?: string;
}

/**
 * The headers of one attempt: Turnout's own (spec 6.3, 6.5) and, beside them, the Standard
 * Webhooks set (decisions.md 12), whose webhook-id is the envelope id; both signed with every
 * live secret, the newest first.
 */
export function deliveryHeaders(body: string, s: Signing): Record<string, string> {
  return {
    'X-Turnout-Event': s.eventType,
    'X-Turnout-Delivery': s.delivery,
    'X-Turnout-Signature': signatureHeader(body, s.secrets, s.t),
    ...standardWebhookHeaders(s.eventId, body, s.secrets, s.t),
  };
}
