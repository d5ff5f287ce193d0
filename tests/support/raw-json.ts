/**
 * The raw text of every object a JSON answer holds under `key` (`"key":{...}`), in order, as the
 * server wrote it: for tests that compare answers byte for byte (escaping included), which a
 * comparison of parsed objects cannot do.
 */
export function rawObjectsAt(raw: string, key: string): string[] {
  const out: string[] = [];
  const opener = `"${key}":{`;
  for (let at = raw.indexOf(opener); at >= 0; at = raw.indexOf(opener, at + 1)) {
    const start = at + opener.length - 1;
    let depth = 0;
    for (let k = start; k < raw.length; k++) {
      const c = raw[k];
      if (c === '"') {
        // Past the string, its escapes included.
        for (k++; raw[k] !== '"'; k++) if (raw[k] === '\\') k++;
      } else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        out.push(raw.slice(start, k + 1));
        at = k;
        break;
      }
    }
  }
  return out;
}
