/** Text matched as a reader finds it: whatever the letters' case (a mail server folds a domain), and only where it stands alone. */

/** `s` as a regular expression that matches it literally. */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Every occurrence of `value` in any case where it stands alone (a global expression): never
 * inside a word (no letter or digit right before or after it). An e-mail address is not found
 * inside a longer one either ("ann@example.org" in "mary-ann@example.org" or
 * "ann@example.org.uk"), though at the end of a sentence it is; other values are found beside
 * a hyphen or a dot ("Roe" in "Smith-Roe", "555-0100" in "1-555-0100").
 */
export const standingAlone = (value: string): RegExp => {
  const [before, after] = value.includes('@') ? ['[\\p{L}\\p{N}._%+\\-@]', '(?![\\p{L}\\p{N}_@])(?![.\\-+][\\p{L}\\p{N}])'] : ['[\\p{L}\\p{N}]', '(?![\\p{L}\\p{N}])'];
  return new RegExp(`(?<!${before})${escapeRegExp(value)}${after}`, 'giu');
};
