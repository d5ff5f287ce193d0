import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CSV_OPTIONS, csvRecords, plainRecords } from '../../cli/rows.js';

/** csv-parse as the import configures it, the definition the quote-free split must give the same records as. */
const parsed = (text: string) => parse(Buffer.from(text), CSV_OPTIONS) as string[][];

const PLAIN = [
  '',
  '\n',
  'a,b\n',
  'a,b',
  'a,b\n1,2\n',
  'a,b\n1,2',
  'a,b\n1,2\n\n',
  'a,b\n\n1,2\n\n\n3\n',
  'a,b,c\n1,,\n,,\n ,  , \n',
  'a,b\r\n1,2\r\n',
  'a,b\r\n\r\n1,2,3,4\r\n5',
  'First Name,Zip\nJosé,02134\n李,\t7\n',
  'a\n,\n,,,,\n',
];

describe('the quote-free CSV split (cli/rows.ts)', () => {
  it.each(PLAIN.map((text) => [JSON.stringify(text), text]))('reads %s as csv-parse does', (_, text) => {
    expect(plainRecords(text)).toEqual(parsed(text));
    expect(csvRecords(Buffer.from(`\uFEFF${text}`))).toEqual(parsed(`\uFEFF${text}`));
  });

  it('leaves to csv-parse a file with a quote or with mixed line ends', () => {
    for (const text of ['a,b\n"1,2",3\n', 'a\n5\'10" tall\n', 'a,b\r\n1,2\n3,4\n', 'a,b\n1,2\r\n', 'a,b\r1,2\r', 'a\r\n\r']) {
      expect(plainRecords(text)).toBeNull();
      expect(csvRecords(Buffer.from(text))).toEqual(parsed(text));
    }
  });

  // Any text of the characters that matter to CSV (quotes, commas, both line ends, a BOM, spaces,
  // text beyond ASCII): the import reads the same records as csv-parse, or fails as it does.
  it('reads any text as csv-parse does (property)', () => {
    const char = fc.constantFrom('a', 'b', 'é', '李', ' ', '\t', ',', ',', '\n', '\n', '\r\n', '\r', '"', '\uFEFF');
    const readBy = (read: () => string[][]) => {
      try {
        return { records: read() };
      } catch {
        return { failed: true };
      }
    };
    fc.assert(
      fc.property(fc.array(char, { maxLength: 60 }), (chars) => {
        const text = chars.join('');
        expect(readBy(() => csvRecords(Buffer.from(text)))).toEqual(readBy(() => parsed(text)));
      }),
      { numRuns: 2000 },
    );
  });

  it('splits any quote-free file as csv-parse reads it (property)', () => {
    const cell = fc.array(fc.constantFrom('a', 'Z', '0', ' ', '\t', 'é', '李', '-'), { maxLength: 4 }).map((c) => c.join(''));
    const line = fc.array(cell, { minLength: 1, maxLength: 5 }).map((cells) => cells.join(','));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 8 }), fc.constantFrom('\n', '\r\n'), fc.boolean(), (lines, end, closed) => {
        const text = lines.join(end) + (closed && lines.length ? end : '');
        const split = plainRecords(text);
        expect(split).not.toBeNull();
        expect(split).toEqual(parsed(text));
      }),
      { numRuns: 2000 },
    );
  });
});

// A file saved by one tool and added to by another mixes line ends; csv-parse used to take the
// first line's end as the file's, leaving a \r in the last cell of every CRLF row after an LF header.
describe('a CSV file with mixed line ends (decisions.md §13)', () => {
  it('keeps no carriage return in a cell when the header ends in LF and the rows in CRLF', () => {
    expect(csvRecords(Buffer.from('FirstName,LastName\nAda,Lovelace\r\nGrace,Hopper\n'))).toEqual([
      ['FirstName', 'LastName'],
      ['Ada', 'Lovelace'],
      ['Grace', 'Hopper'],
    ]);
  });

  it('ends a row at LF after a CRLF header, instead of running the rows together', () => {
    expect(csvRecords(Buffer.from('a,b\r\n1,2\n3,4\n'))).toEqual([['a', 'b'], ['1', '2'], ['3', '4']]);
  });

  it('keeps the line breaks inside a quoted cell as they are', () => {
    expect(csvRecords(Buffer.from('a,b\n"x\r\ny",2\r\n"p\nq",3\r"r\rs",4\n'))).toEqual([
      ['a', 'b'],
      ['x\r\ny', '2'],
      ['p\nq', '3'],
      ['r\rs', '4'],
    ]);
  });
});
