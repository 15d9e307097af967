import { useEffect, useState } from 'preact/hooks';
import { currentToken, onSessionChange } from './api/session';
import { Layout } from './components/layout';
import { RefreshContext } from './lib/use-loader';
import { AccountDetailPage } from './pages/account-detail';
import { AccountsPage } from './pages/accounts';
import { BotCallsPage } from './pages/bot-calls';
import { EventDetailPage } from './pages/event-detail';
import { EventsPage } from './pages/events';
import { OverviewPage } from './pages/overview';
import { SignInPage } from './pages/sign-in';
import { type Route, useRoute } from './router';

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case 'overview':
      return <OverviewPage route={route} />;
    case 'events':
      return <EventsPage route={route} />;
    case 'event':
      return <EventDetailPage key={route.param} eventId={route.param} />;
    case 'accounts':
      return <AccountsPage route={route} />;
    case 'account':
      return <AccountDetailPage key={route.param} accountId={route.param} />;
    case 'bot-calls':
      return <BotCallsPage route={route} />;
    default:
      return <h1>No such page</h1>;
  }
}

export function App() {
  const [signedIn, setSignedIn] = useState(() => currentToken() !== null);
  const [refresh, setRefresh] = useState(0);
  const route = useRoute();
  useEffect(() => onSessionChange(() => setSignedIn(currentToken() !== null)), []);
  if (!signedIn) return <SignInPage />;
  return (
    <RefreshContext.Provider value={refresh}>
      <Layout page={route.page} onRefresh={() => setRefresh((value) => value + 1)}>
        <Page route={route} />
      </Layout>
    </RefreshContext.Provider>
  );
}
