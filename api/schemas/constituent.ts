import { Type } from '@sinclair/typebox';
import { CONSTITUENT_FIELDS } from '../../domain/constituent/rules.js';
import { Created, ListOf, One, Paging, Query } from './common.js';
import { readRecord } from '../../validation/fields.js';
export { ConstituentBody } from '../../validation/bodies.js';

export const Constituent = Type.Object(readRecord('PkConstituent', CONSTITUENT_FIELDS).properties, { $id: 'Constituent' });
export const ConstituentRef = Type.Ref(Constituent);

export const CreateQuery = Query({
  mode: Type.Optional(Type.Literal('upsert', { description: 'With matchOn=email: update the one active constituent with this Email1, or create' })),
  matchOn: Type.Optional(Type.Literal('email')),
});

export const ListQuery = Query({
  email: Type.Optional(Type.String({ description: 'Exact match on Email1 (case-insensitive)' })),
  search: Type.Optional(Type.String({ description: 'Name, email or id' })),
  ...Paging,
});

export const ConstituentCreated = Created('constituent', ConstituentRef);
export const ConstituentOne = One('constituent', ConstituentRef);
export const ConstituentList = ListOf('constituents', ConstituentRef);
