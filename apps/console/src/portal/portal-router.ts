import { type QueryValues, withQuery } from '../api/client';
import { useNavigationState } from '../router';

/**
 * The portal is one page at /portal (the server answers nothing else there but the API): the query says
 * which view (`page`, an event's `id`) and holds the filters, so every view is still a link.
 */
export const PORTAL_BASE = '/portal';

export type PortalPage = 'endpoint' | 'destinations' | 'deliveries' | 'event' | 'health';
const PAGES: readonly PortalPage[] = ['endpoint', 'destinations', 'deliveries', 'event', 'health'];

export interface PortalRoute {
  page: PortalPage;
  query: URLSearchParams;
}

function currentRoute(): PortalRoute {
  const query = new URLSearchParams(location.search);
  const page = query.get('page') as PortalPage | null;
  return { page: page && PAGES.includes(page) ? page : 'endpoint', query };
}

export function portalLink(page: PortalPage, query: QueryValues = {}): string {
  return withQuery(PORTAL_BASE, { page, ...query });
}

export function usePortalRoute(): PortalRoute {
  return useNavigationState(currentRoute);
}
