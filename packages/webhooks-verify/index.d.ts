/** Why a webhook was refused. */
export type WebhookVerificationCode = 'missing_header' | 'malformed_header' | 'timestamp_too_old' | 'timestamp_in_future' | 'no_matching_signature';

export declare class WebhookVerificationError extends Error {
  readonly code: WebhookVerificationCode;
  constructor(code: WebhookVerificationCode, message: string);
}

export interface VerifyOptions {
  /** The request body exactly as received (a string or the raw bytes), before any JSON parsing. */
  rawBody: string | Uint8Array;
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

/** How old (or how far ahead) `t` may be by default, in seconds: 300. */
export declare const DEFAULT_TOLERANCE_SECONDS: number;

/** Returns true, or throws a WebhookVerificationError whose `code` says why. */
export declare function verifyWebhook(options: VerifyOptions): true;

/** The header Turnout sends for `body`: `t=<t>,v1=<hex>` with one v1 per secret. */
export declare function signatureHeader(body: string | Uint8Array, secrets: string[], t: number): string;

export interface VerifyStandardOptions {
  /** The request body exactly as received (a string or the raw bytes), before any JSON parsing. */
  rawBody: string | Uint8Array;
  /** The request's headers (webhook-id, webhook-timestamp, webhook-signature; any case), e.g. Node's `req.headers`. */
  headers: Record<string, string | string[] | undefined | null>;
  /** The endpoint's signing secret (`whsec_<base64>`), or several. */
  secret?: string;
  secrets?: string[];
  /** How old webhook-timestamp may be, in seconds (default 300). Also the allowed clock skew into the future. */
  toleranceSeconds?: number;
  /** The current time (tests). */
  now?: Date | number;
}

/** A type, not an interface, so that it passes where a record of headers is expected. */
export type StandardWebhookHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

/** Checks the Standard Webhooks headers; returns true, or throws a WebhookVerificationError whose `code` says why. */
export declare function verifyStandardWebhook(options: VerifyStandardOptions): true;

/** The Standard Webhooks headers Turnout sends for `body`: one `v1,<base64>` per secret, space-separated. */
export declare function standardWebhookHeaders(id: string, body: string | Uint8Array, secrets: string[], t: number): StandardWebhookHeaders;
