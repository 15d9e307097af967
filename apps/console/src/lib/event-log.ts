/** Message search needs a bounded range (at most 31 days); without a Since it looks back this far. */
const SEARCH_DAYS = 30;

/** Filters about to be applied: a search without Since gets one, SEARCH_DAYS back. */
export function withSearchRange<T extends Record<string, string>>(values: T): T {
  if (!values.q || values.since) return values;
  return { ...values, since: new Date(Date.now() - SEARCH_DAYS * 86_400_000).toISOString() };
}
