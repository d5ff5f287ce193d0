/** Text matched as a user reads it: whatever the letters' case (a mail server folds a domain, a search folds everything). */

/** `s` as a regular expression that matches it literally. */
export const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `text` with every occurrence of `value`, in any case, replaced by `by`. */
export const replaceAnyCase = (text: string, value: string, by: string): string => (value ? text.replace(new RegExp(escapeRegExp(value), 'giu'), by) : text);

/** Whether `text` holds `value` in any case. */
export const includesAnyCase = (text: string, value: string): boolean => value !== '' && new RegExp(escapeRegExp(value), 'iu').test(text);
