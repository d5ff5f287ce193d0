/**
 * Signature verification for webhook receivers. The one implementation is the subscriber's
 * package (packages/webhooks-verify: zero dependencies, installable on its own); the service
 * re-exports it so its tests and the README's `turnout/webhooks` export check the same code.
 */
export { DEFAULT_TOLERANCE_SECONDS, verifyStandardWebhook, verifyWebhook, WebhookVerificationError } from '../packages/webhooks-verify/index.js';
export type { VerifyOptions, VerifyStandardOptions, WebhookVerificationCode } from '../packages/webhooks-verify/index.js';
