/**
 * decisions.md 12: a receiver that answers 429 or 503 with `Retry-After` (delay-seconds or an
 * HTTP date, RFC 9110 10.2.3) is retried then, not on the backoff, though never later than the
 * retry maximum. Anything else, or a header that is neither form, leaves the backoff in charge.
 */
export function retryAfterMs(status: number | null, header: string | null, nowMs: number, maxMs: number): number | null {
  if ((status !== 429 && status !== 503) || !header) return null;
  const value = header.trim();
  let ms: number;
  if (/^\d+$/.test(value)) ms = Number(value) * 1000;
  else {
    // An HTTP date names its day and month (IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`).
    const at = /[a-z]/i.test(value) ? Date.parse(value) : NaN;
    if (Number.isNaN(at)) return null;
    ms = at - nowMs;
  }
  return Math.min(Math.max(ms, 1), maxMs);
}
