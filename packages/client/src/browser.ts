// @turnout/client for browsers: the client without verifyWebhook, whose HMAC needs node:crypto
// (and whose signing secret belongs on a server, never in a page). Bundlers pick this file
// through the package's "browser" export condition.
export { Turnout } from './client.js';
export { TurnoutError } from './errors.js';
export type { ResponseMeta, TurnoutOptions, WithResponse } from './http.js';
export type { Lister } from './paging.js';
export type { BatchItem, BatchOptions, BatchResult, CreateOptions, GetOptions, ReadOnlyResource, UpdateOptions, WritableResource, WriteOptions } from './resources.js';
export type { ChangesListOptions, ChangesQuery, ChangeStream } from './changes.js';
export type * from './types.js';
