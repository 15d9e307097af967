import { useEffect, useState } from 'preact/hooks';
import { currentSession, endSsoSession, signInOptions } from './api/admin';
import { currentIdentity, currentToken, onSessionChange, setIdentity, signOut } from './api/session';
import { Layout } from './components/layout';
import { RefreshContext } from './lib/use-loader';
import { AccountDetailPage } from './pages/account-detail';
import { AccountsPage } from './pages/accounts';
import { AuditPage } from './pages/audit';
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
    case 'audit':
      return <AuditPage route={route} />;
    default:
      return <h1>No such page</h1>;
  }
}

/** Sign out: a single sign-on session is ended on the server too (its cookie is out of the page's reach). */
function signOutEverywhere(): void {
  if (currentIdentity()?.via === 'oidc') void endSsoSession().finally(() => signOut());
  else signOut();
}

export function App() {
  const [signedIn, setSignedIn] = useState(() => currentIdentity() !== null);
  // Until the first GET /admin/v1/session answers: a kept token, or a single sign-on cookie, may sign the tab in.
  const [checking, setChecking] = useState(true);
  const [refresh, setRefresh] = useState(0);
  const route = useRoute();
  useEffect(() => onSessionChange(() => setSignedIn(currentIdentity() !== null)), []);
  useEffect(() => {
    // Without a token, the cookie is worth asking about only where single sign-on is on.
    const probe = currentToken() !== null ? Promise.resolve(true) : signInOptions().then((options) => options.sso);
    probe
      .then((ask) => (ask ? currentSession().then(setIdentity) : undefined))
      .catch(() => undefined)
      .finally(() => setChecking(false));
  }, []);
  if (checking && !signedIn) return <main class="sign-in" aria-busy="true" />;
  if (!signedIn) return <SignInPage />;
  return (
    <RefreshContext.Provider value={refresh}>
      <Layout page={route.page} onRefresh={() => setRefresh((value) => value + 1)} onSignOut={signOutEverywhere}>
        <Page route={route} />
      </Layout>
    </RefreshContext.Provider>
  );
}
