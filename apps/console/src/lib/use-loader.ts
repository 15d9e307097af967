import { createContext } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, type QueryValues } from '../api/client';
import type { Page } from '@app/payloads/admin-api.types';

/** Bumped by the Refresh button: every loader on the page reloads. */
export const RefreshContext = createContext(0);

function asApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : new ApiError(0, 'error', error instanceof Error ? error.message : String(error));
}

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | undefined;
  loading: boolean;
  reload(): void;
}

/** Loads once per change of `deps` (and per Refresh); an answer that arrives after a newer request is dropped. */
export function useLoader<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const refresh = useContext(RefreshContext);
  const [state, setState] = useState<{ data?: T; error?: ApiError; loading: boolean }>({ loading: true });
  const [nonce, setNonce] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const ticket = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => ticket === latest.current && setState({ data, loading: false }),
      (error: unknown) => ticket === latest.current && setState({ error: asApiError(error), loading: false }),
    );
  }, [...deps, refresh, nonce]);
  const reload = useCallback(() => setNonce((value) => value + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export interface Paged<T> {
  items: T[];
  error: ApiError | undefined;
  loading: boolean;
  hasMore: boolean;
  loadMore(): void;
  /** Loads the first page again (after a change made from this page). */
  reload(): void;
}

/** A cursor-paged list: the first page per change of `deps` (and per Refresh), further pages on demand. */
export function usePaged<T>(loadPage: (cursor: string | undefined) => Promise<Page<T>>, deps: unknown[]): Paged<T> {
  const refresh = useContext(RefreshContext);
  const [state, setState] = useState<{ items: T[]; cursor: string | null; error?: ApiError; loading: boolean }>({
    items: [],
    cursor: null,
    loading: true,
  });
  const latest = useRef(0);
  const fetchPage = (cursor: string | undefined, append: boolean): void => {
    const ticket = ++latest.current;
    setState((previous) => ({ ...previous, loading: true, error: undefined }));
    loadPage(cursor).then(
      (page) =>
        ticket === latest.current &&
        setState((previous) => ({ items: append ? [...previous.items, ...page.items] : page.items, cursor: page.next_cursor, loading: false })),
      (error: unknown) => ticket === latest.current && setState((previous) => ({ ...previous, error: asApiError(error), loading: false })),
    );
  };
  useEffect(() => {
    setState({ items: [], cursor: null, loading: true });
    fetchPage(undefined, false);
  }, [...deps, refresh]);
  return {
    items: state.items,
    error: state.error,
    loading: state.loading,
    hasMore: state.cursor !== null,
    loadMore: () => state.cursor !== null && fetchPage(state.cursor, true),
    reload: () => fetchPage(undefined, false),
  };
}

/**
 * A paged list whose filters live in the URL: the applied filters (`names` read from `query`), a key that
 * changes with them, and the pages loaded through `list`.
 */
export function useFilteredPages<T>(query: URLSearchParams, names: readonly string[], list: (query: QueryValues) => Promise<Page<T>>) {
  const filter: Record<string, string> = {};
  for (const name of names) {
    const value = query.get(name);
    if (value) filter[name] = value;
  }
  const key = JSON.stringify(filter);
  const page = usePaged((cursor) => list({ ...filter, cursor, limit: 50 }), [key]);
  return { filter, key, page };
}

/** Calls `tick` every `intervalMs` while `active`. */
export function useInterval(tick: () => void, intervalMs: number, active: boolean): void {
  const saved = useRef(tick);
  saved.current = tick;
  useEffect(() => {
    if (!active) return undefined;
    const timer = window.setInterval(() => saved.current(), intervalMs);
    return () => window.clearInterval(timer);
  }, [intervalMs, active]);
}
