/** Text matched as a reader finds it: whatever the letters' case (a mail server folds a domain), and only where it stands alone. */

/** `s` as a regular expression that matches it literally. */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Every occurrence of `value` in any case where it stands alone (a global expression): not inside
 * a word, and not a part of a longer e-mail address or name: no letter, digit or one of `._%+-@`
 * right before it, and after it no letter, digit, `_` or `@`, nor a `.`, `-` or `+` that goes on
 * with one ("ann@example.org" is not found in "mary-ann@example.org" or "ann@example.org.uk",
 * but is at the end of a sentence).
 */
export const standingAlone = (value: string): RegExp =>
  new RegExp(`(?<![\\p{L}\\p{N}._%+\\-@])${escapeRegExp(value)}(?![\\p{L}\\p{N}_@])(?![.\\-+][\\p{L}\\p{N}])`, 'giu');
