// The package's own tests: `npm test` here (node --test, no dependencies). The project's
// `npm test` runs them too (tests/packages/webhooks-verify.test.ts).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { describe, it } from 'node:test';
import { signatureHeader, standardWebhookHeaders, verifyStandardWebhook, verifyWebhook, WebhookVerificationError } from '../index.js';

const body = '{"id":"evt_1_1700000000","type":"constituent.created"}';
const t = 1_700_000_000;
const now = (t + 100) * 1000;

/**
 * The refusal's code, or 'accepted'.
 * @param {import('../index.js').VerifyOptions} options
 */
function outcome(options) {
  return refusal(() => verifyWebhook(options));
}

/**
 * The refusal's code, or 'accepted'.
 * @param {() => true} verify
 */
function refusal(verify) {
  try {
    verify();
    return 'accepted';
  } catch (err) {
    if (err instanceof WebhookVerificationError) return err.code;
    throw err;
  }
}

describe('verifyWebhook', () => {
  it('accepts the hex HMAC-SHA256 of "<t>.<raw body>" (spec 6.5), computed independently', () => {
    const v1 = createHmac('sha256', 'whsec_a').update(`${t}.${body}`).digest('hex');
    assert.equal(verifyWebhook({ rawBody: body, header: `t=${t},v1=${v1}`, secret: 'whsec_a', now }), true);
    assert.equal(signatureHeader(body, ['whsec_a'], t), `t=${t},v1=${v1}`);
  });

  it('accepts either secret during a rotation, whichever v1 comes first, from a string or the raw bytes', () => {
    const header = signatureHeader(body, ['whsec_new', 'whsec_old'], t);
    assert.equal(outcome({ rawBody: body, header, secret: 'whsec_old', now }), 'accepted');
    assert.equal(outcome({ rawBody: body, header, secret: 'whsec_new', now }), 'accepted');
    assert.equal(outcome({ rawBody: Buffer.from(body), header, secrets: ['whsec_x', 'whsec_new'], now }), 'accepted');
    assert.equal(outcome({ rawBody: new TextEncoder().encode(body), header: [header], secret: 'whsec_new', now }), 'accepted');
  });

  it('refuses a changed body or a wrong secret', () => {
    const header = signatureHeader(body, ['whsec_a'], t);
    assert.equal(outcome({ rawBody: body + ' ', header, secret: 'whsec_a', now }), 'no_matching_signature');
    assert.equal(outcome({ rawBody: body, header, secret: 'whsec_b', now }), 'no_matching_signature');
  });

  it('refuses a t outside the tolerance (300 s by default, either way), and takes another tolerance', () => {
    const header = signatureHeader(body, ['whsec_a'], t);
    assert.equal(outcome({ rawBody: body, header, secret: 'whsec_a', now: (t + 300) * 1000 }), 'accepted');
    assert.equal(outcome({ rawBody: body, header, secret: 'whsec_a', now: (t + 301) * 1000 }), 'timestamp_too_old');
    assert.equal(outcome({ rawBody: body, header, secret: 'whsec_a', now: new Date((t - 301) * 1000) }), 'timestamp_in_future');
    assert.equal(outcome({ rawBody: body, header, secret: 'whsec_a', now: (t + 500) * 1000, toleranceSeconds: 600 }), 'accepted');
  });

  it('refuses a missing or malformed header', () => {
    assert.equal(outcome({ rawBody: body, header: undefined, secret: 'whsec_a', now }), 'missing_header');
    assert.equal(outcome({ rawBody: body, header: '', secret: 'whsec_a', now }), 'missing_header');
    assert.equal(outcome({ rawBody: body, header: 'v1=abc', secret: 'whsec_a', now }), 'malformed_header');
    assert.equal(outcome({ rawBody: body, header: `t=${t},v1=XYZ`, secret: 'whsec_a', now }), 'malformed_header');
  });

  it('needs a secret', () => {
    assert.throws(() => verifyWebhook({ rawBody: body, header: signatureHeader(body, ['s'], t), now }), TypeError);
  });
});

describe('verifyStandardWebhook (the webhook-* headers)', () => {
  const secretA = 'whsec_' + Buffer.from('a'.repeat(32)).toString('base64');
  const secretB = 'whsec_' + Buffer.from('b'.repeat(32)).toString('base64');
  const id = 'evt_10_1700000000';
  /** @param {Partial<import('../index.js').VerifyStandardOptions>} over */
  const standard = (over) => refusal(() => verifyStandardWebhook({ rawBody: body, headers: standardWebhookHeaders(id, body, [secretA], t), secret: secretA, now, ...over }));

  it('signs "<id>.<timestamp>.<body>" with the base64-decoded secret, base64 v1 (Standard Webhooks), computed independently', () => {
    const mac = createHmac('sha256', Buffer.from('a'.repeat(32))).update(`${id}.${t}.${body}`).digest('base64');
    assert.deepEqual(standardWebhookHeaders(id, body, [secretA], t), { 'webhook-id': id, 'webhook-timestamp': String(t), 'webhook-signature': `v1,${mac}` });
    assert.equal(standard({}), 'accepted');
  });

  it('carries one space-separated v1 per secret, the newest first, and accepts either', () => {
    const headers = standardWebhookHeaders(id, body, [secretB, secretA], t);
    assert.equal(headers['webhook-signature'].split(' ').length, 2);
    assert.equal(headers['webhook-signature'].split(' ')[0], standardWebhookHeaders(id, body, [secretB], t)['webhook-signature']);
    assert.equal(standard({ headers, secret: secretA }), 'accepted');
    assert.equal(standard({ headers, secret: secretB }), 'accepted');
    assert.equal(standard({ headers: { ...headers, 'Webhook-Id': id }, secret: undefined, secrets: [secretB] }), 'accepted');
  });

  it('refuses a changed body, id or secret, and a timestamp outside the tolerance', () => {
    assert.equal(standard({ rawBody: body + ' ' }), 'no_matching_signature');
    assert.equal(standard({ secret: secretB }), 'no_matching_signature');
    assert.equal(standard({ headers: { ...standardWebhookHeaders(id, body, [secretA], t), 'webhook-id': 'evt_11_1700000000' } }), 'no_matching_signature');
    assert.equal(standard({ now: (t + 301) * 1000 }), 'timestamp_too_old');
    assert.equal(standard({ now: (t - 301) * 1000 }), 'timestamp_in_future');
  });

  it('refuses missing or malformed headers', () => {
    const headers = standardWebhookHeaders(id, body, [secretA], t);
    assert.equal(standard({ headers: { ...headers, 'webhook-id': undefined } }), 'missing_header');
    assert.equal(standard({ headers: { ...headers, 'webhook-timestamp': 'soon' } }), 'malformed_header');
    assert.equal(standard({ headers: { ...headers, 'webhook-signature': 'v2,abc' } }), 'malformed_header');
  });
});
