import { Type } from '@sinclair/typebox';
import { VOLUNTEER_FIELDS } from '../../domain/volunteer/rules.js';
import { Created, ListOf, Nullable, One, Paging, Query } from './common.js';
import { readRecord, writeBody } from '../../validation/fields.js';
export { CreateVolunteerBody } from '../../validation/bodies.js';

const linked = {
  ConstituentName: Nullable(Type.String({ description: "The linked constituent's name (read-only)" })),
  Email1: Nullable(Type.String({ description: "The linked constituent's Email1 (read-only)" })),
  Phone1: Nullable(Type.String({ description: "The linked constituent's Phone1 (read-only)" })),
};

export const Volunteer = Type.Object(readRecord('PkVolunteer', VOLUNTEER_FIELDS, linked).properties, { $id: 'Volunteer' });
export const VolunteerRef = Type.Ref(Volunteer);
export const UpdateVolunteerBody = writeBody(VOLUNTEER_FIELDS);

export const VolunteerListQuery = Query({
  email: Type.Optional(Type.String({ description: "Exact match on the constituent's Email1 (case-insensitive)" })),
  search: Type.Optional(Type.String({ description: 'Name, email or id' })),
  isActive: Type.Optional(Type.Boolean()),
  ...Paging,
});

export const VolunteerCreated = Created('volunteer', VolunteerRef);
export const VolunteerOne = One('volunteer', VolunteerRef);
export const VolunteerList = ListOf('volunteers', VolunteerRef);
