import { createHmac } from 'node:crypto';

/**
 * Spec 6.5: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, one v1 per signing
 * secret, the newest first (decisions.md 7: during a rotation's overlap both secrets sign).
 */
export function signatureHeader(body: string, secrets: string[], t: number): string {
  return [`t=${t}`, ...secrets.map((s) => `v1=${createHmac('sha256', s).update(`${t}.${body}`).digest('hex')}`)].join(',');
}
