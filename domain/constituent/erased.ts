import { PERSONAL_FIELDS } from './rules.js';

type Data = Record<string, unknown>;

const nullPersonal = (values: unknown): unknown => {
  if (!values || typeof values !== 'object') return values;
  const out: Data = { ...(values as Data) };
  for (const f of PERSONAL_FIELDS) if (f in out) out[f] = null;
  return out;
};

/**
 * An event's data as the erasure leaves it (decisions.md §17): `fields` (a creation) and
 * `changes` (an update) without personal values, and `erased: true`. The same whether the log
 * was rewritten yet or not, so a reader that applies it (the change feed's projector rebuilding
 * an erased person's envelopes) never depends on which came first.
 */
export function erasedData(e: { data: unknown }): Data {
  const data: Data = { ...(e.data as Data) };
  if ('fields' in data) data.fields = nullPersonal(data.fields);
  if ('changes' in data) data.changes = nullPersonal(data.changes);
  data.erased = true;
  return data;
}
