import { useEffect, useState } from 'preact/hooks';
import { currentToken, onSessionChange, signOutReason } from '../api/session';
import { TopBar } from '../components/layout';
import { RefreshContext } from '../lib/use-loader';
import { DeliveriesPage } from './deliveries-page';
import { DestinationsPage } from './destinations-page';
import { EndpointPage } from './endpoint-page';
import { HealthPage } from './health-page';
import { PortalEventPage } from './portal-event-page';
import { type PortalPage, portalLink, type PortalRoute, usePortalRoute } from './portal-router';

const NAV: { label: string; page: PortalPage; pages: PortalPage[] }[] = [
  { label: 'Endpoint', page: 'endpoint', pages: ['endpoint'] },
  { label: 'Destinations', page: 'destinations', pages: ['destinations'] },
  { label: 'Deliveries', page: 'deliveries', pages: ['deliveries', 'event'] },
  { label: 'Health', page: 'health', pages: ['health'] },
];

function Page({ route }: { route: PortalRoute }) {
  switch (route.page) {
    case 'destinations':
      return <DestinationsPage />;
    case 'deliveries':
      return <DeliveriesPage route={route} />;
    case 'event':
      return <PortalEventPage key={route.query.get('id')} eventId={route.query.get('id') ?? ''} />;
    case 'health':
      return <HealthPage route={route} />;
    default:
      return <EndpointPage />;
  }
}

export function PortalApp({ linkProblem }: { linkProblem: string | null }) {
  const [signedIn, setSignedIn] = useState(() => currentToken() !== null);
  const [refresh, setRefresh] = useState(0);
  const route = usePortalRoute();
  useEffect(() => onSessionChange(() => setSignedIn(currentToken() !== null)), []);
  const section = NAV.find((item) => item.pages.includes(route.page))?.label ?? 'Endpoint';
  useEffect(() => {
    document.title = `${section} · Your callbacks`;
  }, [section]);
  if (!signedIn) {
    return (
      <main class="page sign-in">
        <h1>Your callbacks portal</h1>
        {(linkProblem ?? signOutReason) && (
          <p class="error" role="alert">
            {linkProblem ?? signOutReason}
          </p>
        )}
        <p>Open the portal with a link made for you (from the Open API's portal_link, or from your operator). A link works once.</p>
      </main>
    );
  }
  return (
    <RefreshContext.Provider value={refresh}>
      <TopBar
        brand="Your callbacks"
        items={NAV.map((item) => ({ label: item.label, href: portalLink(item.page), current: item.pages.includes(route.page) }))}
        onRefresh={() => setRefresh((value) => value + 1)}
      />
      <main class="page">
        <Page route={route} />
      </main>
    </RefreshContext.Provider>
  );
}
