/**
 * How many of a team's rows hold each one- and two-character string in their search text: the
 * total of a short search (decisions.md §5 allows 1 and 2 characters, which no trigram index
 * serves) read from one row instead of from every row of the team. Counted per row, not per
 * occurrence: a row holding "an" twice counts once, as the search counts rows.
 *
 * The text is the search column as sqlite-schema.ts writes it: the team's marker (characters of
 * U+E000-U+EFFF) and then the folded fields joined by U+0001. No gram spans two fields or holds a
 * marker character, since no search can match one (searches holding marker characters go the
 * exact way, and a needle holding U+0000 or U+0001 is counted from the rows instead: isGrammable).
 */

/** Code units 0-127: one- and two-character grams of them count in arrays, without hashing. */
const ASCII = 128;
const SLOTS = ASCII + ASCII * ASCII;

/** Whether a code unit can never be part of a counted gram. */
const breaks = (c: number): boolean => c <= 1 || (c >= 0xe000 && c <= 0xefff);

/** Whether a short search's needle (folded) is counted from the gram table: 1 or 2 characters, none of them a break. */
export function isGrammable(needle: string): boolean {
  const chars = [...needle];
  if (chars.length < 1 || chars.length > 2) return false;
  for (const ch of chars) if (breaks(ch.charCodeAt(0))) return false;
  return true;
}

/**
 * Adds rows' grams (sign +1) or takes them away (-1) and hands each gram's change to `emit`, one
 * team at a time: the counts of one team are held, and handed on when a row of another team
 * comes (or at flush), so memory stays the same whatever the number of teams. Rows fed grouped
 * by team emit each (marker, gram) once; otherwise the changes of one gram come in parts, which
 * add up the same. A rebuild feeds every row of a collection in its team's order; a sync feeds the
 * waiting rows' old text with -1 and their text now with +1.
 */
export class GramCounter {
  /** ASCII grams' counts by slot (0-127 one character, then 128 + 128 * first + second). */
  private readonly counts = new Int32Array(SLOTS);
  /** The row each slot was last counted for: a row counts each gram once. */
  private readonly seen = new Int32Array(SLOTS).fill(-1);
  /** The slots counted since the last hand-on: only they are read and cleared. */
  private touched: number[] = [];
  private readonly other = new Map<string, number>();
  private readonly otherSeen = new Map<string, number>();
  private marker: string | null = null;
  private row = 0;

  /** `markerLength`: the characters of team marker every counted row's text begins with. */
  constructor(
    private readonly markerLength: number,
    private readonly emit: (marker: string, gram: string, delta: number) => void,
  ) {}

  add(text: string | null | undefined, sign: 1 | -1): void {
    const n = this.markerLength;
    if (!text || n === 0 || text.length < n) return;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c < 0xe000 || c > 0xefff) return; // no marker: a team no query can fix by its marker
    }
    const marker = text.slice(0, n);
    if (marker !== this.marker) {
      this.flush();
      this.marker = marker;
    }
    const row = this.row++;
    const { counts, seen, touched } = this;
    // prev: the previous character's code unit when ASCII (-1 when not, or after a break);
    // prevText: the previous character as text when it was not ASCII ('' otherwise).
    let prev = -1;
    let prevText = '';
    for (let i = n; i < text.length; ) {
      const c = text.charCodeAt(i);
      if (c < ASCII) {
        i++;
        if (breaks(c)) {
          prev = -1;
          prevText = '';
          continue;
        }
        if (seen[c] !== row) {
          seen[c] = row;
          if (counts[c] === 0) touched.push(c);
          counts[c] += sign;
        }
        if (prev >= 0) {
          const slot = ASCII + prev * ASCII + c;
          if (seen[slot] !== row) {
            seen[slot] = row;
            if (counts[slot] === 0) touched.push(slot);
            counts[slot] += sign;
          }
        } else if (prevText) this.count(row, prevText + text[i - 1], sign);
        prev = c;
        prevText = '';
        continue;
      }
      // A character outside ASCII: one code unit, or a surrogate pair.
      const wide = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length;
      const ch = wide ? text.slice(i, i + 2) : text[i];
      i += wide ? 2 : 1;
      if (breaks(c)) {
        prev = -1;
        prevText = '';
        continue;
      }
      this.count(row, ch, sign);
      if (prev >= 0) this.count(row, String.fromCharCode(prev) + ch, sign);
      else if (prevText) this.count(row, prevText + ch, sign);
      prev = -1;
      prevText = ch;
    }
  }

  /** Hands on the held team's changes. */
  flush(): void {
    const marker = this.marker;
    if (marker === null) return;
    const { counts } = this;
    for (const slot of this.touched) {
      const n = counts[slot];
      if (n === 0) continue; // counted up and down again (a slot is listed each time it leaves 0)
      counts[slot] = 0;
      this.emit(marker, slot < ASCII ? String.fromCharCode(slot) : String.fromCharCode((slot - ASCII) >> 7, (slot - ASCII) & (ASCII - 1)), n);
    }
    this.touched = [];
    for (const [gram, n] of this.other) if (n !== 0) this.emit(marker, gram, n);
    this.other.clear();
    this.otherSeen.clear();
    this.marker = null;
  }

  private count(row: number, gram: string, sign: number): void {
    if (this.otherSeen.get(gram) === row) return;
    this.otherSeen.set(gram, row);
    this.other.set(gram, (this.other.get(gram) ?? 0) + sign);
  }
}
