import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { LOOKUP_LISTS } from '../../domain/lookup/events.js';
import { EVENT_TIME_ZONES } from '../../domain/lookup/timezones.js';
import { LOOKUPS, type LookupDoc } from '../../projections/lookups.js';
import { eq } from '../../projections/store/port.js';
import { apiContext } from '../auth.js';
import { API_ERRORS, errors } from '../schemas/common.js';
import { Lookups, TimeZones } from '../schemas/lookup.js';
import type { Services } from '../../runtime/services.js';

export const lookupRoutes =
  (services: Services): FastifyPluginAsyncTypebox =>
  async (app) => {
    const tags = ['Lookups'];
    app.get('/lookups', { schema: { tags, summary: "The account's lists for Fk fields", response: { 200: Lookups, ...errors(...API_ERRORS) } } }, async (request) => {
      const r = await services.store.find<LookupDoc>({ collection: LOOKUPS, filter: eq('FkTeam', apiContext(request).team), sort: [{ field: 'id', dir: 'asc' }] });
      const out = Object.fromEntries(LOOKUP_LISTS.map((l) => [l, [] as Array<{ id: number; name: string }>]));
      for (const d of r.items) out[d.list].push({ id: d.id, name: d.name });
      return out;
    });
    app.get(
      '/lookups/event-time-zones',
      { schema: { tags, summary: 'Time zones for FkTimeZone', response: { 200: TimeZones, ...errors(...API_ERRORS) } } },
      async () => ({ eventTimeZones: [...EVENT_TIME_ZONES] }),
    );
  };
