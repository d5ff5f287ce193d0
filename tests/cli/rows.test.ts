import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvRecords, plainRecords } from '../../cli/rows.js';

/** What the import read every file with before the quote-free split: the split must give the same records. */
const parsed = (text: string) => parse(Buffer.from(text), { bom: true, relax_column_count: true, relax_quotes: true }) as string[][];

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
});
