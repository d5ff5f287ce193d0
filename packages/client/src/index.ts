// @turnout/client for Node 20+ (and servers in general): the client and verifyWebhook.
export * from './browser.js';
export { verifyWebhook, WebhookVerificationError, type VerifyWebhookOptions, type WebhookHeaders } from './webhooks.js';
