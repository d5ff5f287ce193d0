/** Text matched as a reader finds it: whatever the letters' case (a mail server folds a domain), and only where it stands alone. */

/** `s` as a regular expression that matches it literally. */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Every occurrence of `value` in any case where no letter or digit stands right before or after it (a global expression). */
export const standingAlone = (value: string): RegExp => new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(value)}(?![\\p{L}\\p{N}])`, 'giu');
