import { afterEach, describe, expect, it, vi } from 'vitest';
import { startProgress } from '../../cli/progress.js';
import { typedCell } from '../../cli/rows.js';

/** A stderr stand-in: a terminal or not, keeping what was written. */
function stream(isTTY: boolean) {
  const written: string[] = [];
  return { written, stream: { isTTY, columns: 100, write: (s: string) => (written.push(s), true), cursorTo: () => true, clearLine: () => true, moveCursor: () => true, on: () => undefined, removeListener: () => undefined } as unknown as NodeJS.WriteStream };
}

describe('progress off a terminal (decisions.md §13)', () => {
  it('writes a plain line at each 10 % step, with rate and ETA, and no carriage return or escape code', () => {
    const out = stream(false);
    let t = 0;
    const p = startProgress({ label: 'import', total: 1995, stream: out.stream, now: () => t });
    for (let done = 1; done <= 1995; done++) {
      t = done * 2; // 500 rows/s
      p.update(done);
    }
    p.stop();
    expect(out.written.length).toBe(10);
    expect(out.written[0]).toBe('import: 200/1995 (500/s, ETA 4 s)\n');
    expect(out.written.at(-1)).toBe('import: 1995/1995 (500/s, ETA 0 s)\n');
    expect(out.written.join('')).not.toMatch(/[\r\x1b]/);
  });

  it('writes a line every 5 s when the work is slow, and counts without a total', () => {
    const out = stream(false);
    let t = 0;
    const p = startProgress({ label: 'export', stream: out.stream, now: () => t });
    for (let done = 1; done <= 12; done++) {
      t = done * 1000;
      p.update(done);
    }
    p.stop();
    expect(out.written).toEqual(['export: 5 (1/s)\n', 'export: 10 (1/s)\n', 'export: 12 (1/s)\n']);
  });

  describe('while no figures come (an import whose first batch, with its retries, takes over 5 s)', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('still writes a line every 5 s, counted from the last line, and none once stopped', () => {
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
      const out = stream(false);
      const p = startProgress({ label: 'import', total: 1000, stream: out.stream, now: () => Date.now() });
      vi.advanceTimersByTime(4_999);
      expect(out.written).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(out.written).toEqual(['import: 0/1000 (0/s, ETA ?)\n']);
      vi.advanceTimersByTime(1_000);
      p.update(50); // less than a 10 % step: no line of its own
      vi.advanceTimersByTime(3_999);
      expect(out.written).toHaveLength(1);
      vi.advanceTimersByTime(1);
      expect(out.written.at(-1)).toBe('import: 50/1000 (5/s, ETA 3 min)\n');
      vi.advanceTimersByTime(2_000);
      p.update(200); // a 10 % step's line; the next comes 5 s after it
      expect(out.written.at(-1)).toBe('import: 200/1000 (17/s, ETA 48 s)\n');
      vi.advanceTimersByTime(4_999);
      expect(out.written).toHaveLength(3);
      vi.advanceTimersByTime(1);
      expect(out.written).toHaveLength(4);
      p.stop();
      vi.advanceTimersByTime(60_000);
      expect(out.written).toHaveLength(4);
      expect(out.written.join('')).not.toMatch(/[\r\x1b]/);
    });

    it('keeps no process alive for its lines (the timer is unref\'d)', () => {
      const timers = vi.spyOn(globalThis, 'setTimeout');
      try {
        const p = startProgress({ label: 'export', stream: stream(false).stream });
        const timer = timers.mock.results.at(-1)?.value as NodeJS.Timeout;
        expect(timer.hasRef()).toBe(false);
        p.stop();
      } finally {
        timers.mockRestore();
      }
    });
  });

  it('says nothing when no work was done (a refused rebuild)', () => {
    const out = stream(false);
    startProgress({ label: 'rebuild', stream: out.stream }).stop();
    expect(out.written).toEqual([]);
  });

  it('draws a bar with rate and ETA on a terminal', () => {
    const out = stream(true);
    const p = startProgress({ label: 'import', total: 10, stream: out.stream });
    p.update(10);
    p.stop();
    expect(out.written.join('')).toMatch(/import \[[\u2588\u2591]+\] 10\/10 \(\d+\/s, ETA \S+\)/);
  });

  it('draws the bar on a terminal once a total comes with the figures (a rebuild learns its log\'s length as it starts), a count before', () => {
    const out = stream(true);
    const p = startProgress({ label: 'rebuild', stream: out.stream });
    p.update(5);
    p.update(50, 100);
    p.update(100, 100);
    p.stop();
    const text = out.written.join('');
    expect(text).toMatch(/rebuild: 5 \(\d+\/s\)/);
    expect(text).toMatch(/rebuild \[[\u2588\u2591]+\] 100\/100 \(\d+\/s, ETA \S+\)/);
  });
});

describe('a CSV cell, typed by its field (decisions.md §13)', () => {
  it('keeps text as text, parses whole numbers, numbers and booleans, and leaves a mistyped cell as text for the schema to name', () => {
    expect(typedCell({ kind: 'string' }, '02134')).toBe('02134');
    expect(typedCell({ kind: 'phone' }, '5558675309')).toBe('5558675309');
    expect(typedCell(undefined, '7')).toBe('7');
    expect(typedCell({ kind: 'int' }, '40')).toBe(40);
    expect(typedCell({ kind: 'ref' }, '0x10')).toBe('0x10');
    expect(typedCell({ kind: 'number' }, '12.50')).toBe(12.5);
    expect(typedCell({ kind: 'number' }, '1e3')).toBe('1e3');
    expect(typedCell({ kind: 'boolean' }, 'TRUE')).toBe(true);
    expect(typedCell({ kind: 'boolean' }, 'false')).toBe(false);
    expect(typedCell({ kind: 'boolean' }, 'yes')).toBe('yes');
  });
});
