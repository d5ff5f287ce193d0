import { Type } from '@sinclair/typebox';
import { LOOKUP_LISTS } from '../../domain/lookup/events.js';

export const LookupEntry = Type.Object({ id: Type.Integer(), name: Type.String() });

export const Lookups = Type.Object(Object.fromEntries(LOOKUP_LISTS.map((l) => [l, Type.Array(LookupEntry)])), {
  description: "The account's own lists whose ids are used in Fk fields",
});

export const TimeZones = Type.Object({
  eventTimeZones: Type.Array(Type.Object({ id: Type.Integer(), name: Type.String({ description: 'IANA time zone' }), label: Type.String() })),
});
