/**
 * Spec 6.5: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, one v1 per signing
 * secret, the newest first (decisions.md 7: during a rotation's overlap both secrets sign); and
 * the Standard Webhooks headers beside it (decisions.md 12). Signing and verifying live together
 * in the subscriber's package, so they cannot disagree.
 */
export { signatureHeader, standardWebhookHeaders } from '../packages/webhooks-verify/index.js';
