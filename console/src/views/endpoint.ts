/** decisions.md §9 and §12: an endpoint as the admin API shows it. */
export interface Endpoint {
  id: number;
  url: string;
  events: string[];
  active: boolean;
  description: string | null;
  maxPerSecond?: number | null;
  disabledAt?: string | null;
  disabledReason?: string | null;
  createdAt: string;
}

/** "constituent.created, volunteer.*" as typed into a field, to the API's list. */
export const eventList = (text: string) =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
