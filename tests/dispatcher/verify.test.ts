import { describe, expect, it } from 'vitest';
import { signatureHeader } from '../../dispatcher/sign.js';
import { verifyWebhook, WebhookVerificationError } from '../../dispatcher/verify.js';

const body = '{"id":"evt_1_1700000000","type":"constituent.created"}';
const now = 1_700_000_100_000;
const t = 1_700_000_000;

function code(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof WebhookVerificationError) return e.code;
    throw e;
  }
}

describe('verifying a webhook as a subscriber', () => {
  it('accepts the signature of the secret, or of either secret during a rotation', () => {
    const h = signatureHeader(body, ['whsec_new', 'whsec_old'], t);
    expect(verifyWebhook({ rawBody: body, header: h, secret: 'whsec_old', now })).toBe(true);
    expect(verifyWebhook({ rawBody: Buffer.from(body), header: h, secrets: ['whsec_x', 'whsec_new'], now })).toBe(true);
  });

  it('rejects a changed body, a wrong secret, an old or future t and a malformed header, each with its code', () => {
    const h = signatureHeader(body, ['whsec_a'], t);
    expect(code(() => verifyWebhook({ rawBody: body + ' ', header: h, secret: 'whsec_a', now }))).toBe('no_matching_signature');
    expect(code(() => verifyWebhook({ rawBody: body, header: h, secret: 'whsec_b', now }))).toBe('no_matching_signature');
    expect(code(() => verifyWebhook({ rawBody: body, header: h, secret: 'whsec_a', now: now + 400_000 }))).toBe('timestamp_too_old');
    expect(code(() => verifyWebhook({ rawBody: body, header: h, secret: 'whsec_a', now: now - 1_000_000 }))).toBe('timestamp_in_future');
    expect(code(() => verifyWebhook({ rawBody: body, header: 'v1=abc', secret: 'whsec_a', now }))).toBe('malformed_header');
    expect(code(() => verifyWebhook({ rawBody: body, header: undefined, secret: 'whsec_a', now }))).toBe('missing_header');
    expect(verifyWebhook({ rawBody: body, header: h, secret: 'whsec_a', now: now + 400_000, toleranceSeconds: 600 })).toBe(true);
  });
});
