import { describe, expect, it } from 'vitest';
import { dropUnused } from '../../cli/commands.js';
import { CommandFailed } from '../../cli/errors.js';

describe('turnout rebuild --drop-unused', () => {
  it('refuses without a MongoDB read store to work on, printing nothing on stdout', async () => {
    const lines: string[] = [];
    const refused = dropUnused(undefined, (l) => void lines.push(l));
    await expect(refused).rejects.toBeInstanceOf(CommandFailed);
    await expect(refused).rejects.toThrow(/TURNOUT_MONGO_URL/);
    expect(lines).toEqual([]);
  });
});
