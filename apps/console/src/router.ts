import { useEffect, useState } from 'preact/hooks';
import { type QueryValues, withQuery } from './api/client';

/**
 * History routes under /admin: the path names the page (and an event or account id), the query holds
 * the filters, so every view is a link. The token is never part of either.
 */
export const BASE = '/admin';

export type PageName = 'overview' | 'events' | 'event' | 'accounts' | 'account' | 'bot-calls' | 'audit' | 'not-found';

export interface Route {
  page: PageName;
  /** The event id or account id of a detail page, decoded. */
  param: string;
  query: URLSearchParams;
}

const PAGES: [RegExp, PageName][] = [
  [/^\/?$/, 'overview'],
  [/^\/events\/?$/, 'events'],
  [/^\/events\/([^/]+)$/, 'event'],
  [/^\/accounts\/?$/, 'accounts'],
  [/^\/accounts\/([^/]+)$/, 'account'],
  [/^\/bot-calls\/?$/, 'bot-calls'],
  [/^\/audit\/?$/, 'audit'],
];

export function parseRoute(pathname: string, search: string): Route {
  const query = new URLSearchParams(search);
  if (pathname !== BASE && !pathname.startsWith(`${BASE}/`)) return { page: 'not-found', param: '', query };
  const rest = pathname.slice(BASE.length);
  for (const [pattern, page] of PAGES) {
    const match = pattern.exec(rest);
    if (!match) continue;
    try {
      return { page, param: match[1] ? decodeURIComponent(match[1]) : '', query };
    } catch {
      break;
    }
  }
  return { page: 'not-found', param: '', query };
}

/** A console URL: `path` is relative to /admin ('' for the overview), ids are encoded by the caller's `segment`. */
export function link(path: string, query: QueryValues = {}): string {
  return withQuery(`${BASE}${path}`, query);
}

export const segment = (value: string | number): string => encodeURIComponent(String(value));

const NAVIGATED = 'console:navigated';

export function navigate(href: string, { replace = false }: { replace?: boolean } = {}): void {
  if (replace) history.replaceState(null, '', href);
  else history.pushState(null, '', href);
  window.dispatchEvent(new Event(NAVIGATED));
  if (!replace) window.scrollTo(0, 0);
}

/** Replaces the current page's filters in the URL (a new history entry, so Back returns to the old filters). */
export function setQuery(query: QueryValues): void {
  navigate(withQuery(location.pathname, query));
}

function currentRoute(): Route {
  return parseRoute(location.pathname, location.search);
}

export function useRoute(): Route {
  return useNavigationState(currentRoute);
}

/** `read()` of the current address, read again on every navigation (links, Back and Forward). */
export function useNavigationState<T>(read: () => T): T {
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = (): void => setRoute(read());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return route;
}
