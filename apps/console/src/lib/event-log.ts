import type { EventPage } from '@app/payloads/admin-api.types';
import type { QueryValues } from '../api/client';
import { type Paged, usePaged } from './use-loader';

/** Message search needs a bounded range (at most 31 days); without a Since it looks back this far. */
const SEARCH_DAYS = 30;

/**
 * The delivery log of a page whose filters live in the URL: the applied filters (`names` read from
 * the query), a key that changes with them, and the pages loaded through `list`.
 */
export function useEventLog(query: URLSearchParams, names: readonly string[], list: (query: QueryValues) => Promise<EventPage>) {
  const filter: Record<string, string> = {};
  for (const name of names) {
    const value = query.get(name);
    if (value) filter[name] = value;
  }
  const key = JSON.stringify(filter);
  const events: Paged<EventPage['items'][number]> = usePaged((cursor) => list({ ...filter, cursor, limit: 50 }), [key]);
  return { filter, key, events };
}

/** Filters about to be applied: a search without Since gets one, SEARCH_DAYS back. */
export function withSearchRange<T extends Record<string, string>>(values: T): T {
  if (!values.q || values.since) return values;
  return { ...values, since: new Date(Date.now() - SEARCH_DAYS * 86_400_000).toISOString() };
}
