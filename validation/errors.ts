import { DomainError } from '../domain/shared/errors.js';

export interface AjvError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

const PART: Record<string, string> = { body: 'body field', querystring: 'query parameter', params: 'path parameter', headers: 'header' };

/** Turns the first schema violation into the spec's error: unknown, missing or invalid, naming the field. */
export function fromValidation(errors: AjvError[], context: string): DomainError {
  const e = errors[0];
  const path = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  const part = PART[context] ?? 'field';
  if (e.keyword === 'additionalProperties') {
    const field = [path, String(e.params.additionalProperty)].filter((x, i) => i === 1 || x).join('.');
    return new DomainError('unknown_field', `${JSON.stringify(field)} is not a recognised ${part} here; remove it.`, field);
  }
  if (e.keyword === 'required') {
    const field = [path, String(e.params.missingProperty)].filter((x, i) => i === 1 || x).join('.');
    return new DomainError('missing_field', `${field} is required.`, field);
  }
  if (!path && context === 'body') return new DomainError('invalid_json', 'The body must be a JSON object.');
  const field = path;
  let what: string;
  switch (e.keyword) {
    case 'type': {
      const t = ([] as unknown[]).concat(e.params.type).filter((x) => x !== 'null');
      const names: Record<string, string> = { integer: 'a whole number', number: 'a number', boolean: 'true or false', string: 'a string', object: 'an object', array: 'a list' };
      what = `must be ${t.map((x) => names[String(x)] ?? x).join(' or ')}`;
      break;
    }
    case 'maxLength':
      what = `must be at most ${e.params.limit} characters`;
      break;
    case 'minLength':
      what = `must be at least ${e.params.limit} characters`;
      break;
    case 'minimum':
    case 'maximum':
      what = `must be ${e.keyword === 'minimum' ? 'at least' : 'at most'} ${e.params.limit}`;
      break;
    case 'minItems':
    case 'maxItems':
      what = `must hold ${e.keyword === 'minItems' ? 'at least' : 'at most'} ${e.params.limit} item${e.params.limit === 1 ? '' : 's'}`;
      break;
    case 'exclusiveMinimum':
      what = `must be greater than ${e.params.limit}`;
      break;
    case 'enum':
      what = `must be one of ${(e.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
      break;
    case 'const': {
      // A union of literals fails each branch in turn: name every value it allows, not the first.
      const allowed = errors.filter((x) => x.keyword === 'const' && x.instancePath === e.instancePath).map((x) => JSON.stringify(x.params.allowedValue));
      what = allowed.length > 1 ? `must be one of ${allowed.join(', ')}` : `must be ${allowed[0]}`;
      break;
    }
    default:
      what = e.message ?? 'is not valid';
  }
  return new DomainError('invalid_field', `${field} ${what}.`, field);
}
