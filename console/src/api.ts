import { forgetToken, readToken } from './session';

/** An API refusal in words: the contract's {error: {code, message, field}} with its status. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

/** Called when the token is refused, so the page can go back to signing in. */
let onUnauthorized: (message: string) => void = () => {};
export const whenUnauthorized = (f: (message: string) => void) => (onUnauthorized = f);

type Query = Record<string, string | number | undefined | null>;

function address(path: string, query?: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const qs = params.toString();
  return `/admin/v1${path}${qs ? `?${qs}` : ''}`;
}

/** One call to the admin API with the session's token; any non-2xx answer throws an ApiError. */
export async function call<T = any>(method: string, path: string, options: { body?: unknown; query?: Query; signal?: AbortSignal } = {}): Promise<T> {
  const headers: Record<string, string> = { authorization: `Bearer ${readToken() ?? ''}` };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(address(path, options.query), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: options.signal,
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'network', 'The server could not be reached; check that Turnout is running.');
  }
  const text = await res.text();
  let json: any = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: described below */
  }
  if (res.ok) return json as T;
  const e = json?.error;
  if (res.status === 401) {
    forgetToken();
    onUnauthorized(`The admin token was refused: ${e?.message ?? 'unauthorized'}`);
  }
  throw new ApiError(res.status, e?.code ?? 'http_error', e?.message ?? `The server answered ${res.status} ${res.statusText}.`, e?.field ?? undefined);
}

/** The words shown for a failure: what the API said, and which field it was about. */
export function describe(err: unknown): string {
  if (err instanceof ApiError) {
    const where = err.field ? ` (field ${err.field})` : '';
    return `${err.message}${where} [${err.status ? `${err.status} ` : ''}${err.code}]`;
  }
  return err instanceof Error ? err.message : String(err);
}
