import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { currentIdentity, roleAllows, signOut } from '../api/session';
import { link, type PageName } from '../router';
import { Link } from './link';

const NAV: { label: string; href: string; pages: PageName[] }[] = [
  { label: 'Overview', href: link(''), pages: ['overview'] },
  { label: 'Events', href: link('/events'), pages: ['events', 'event'] },
  { label: 'Accounts', href: link('/accounts'), pages: ['accounts', 'account'] },
  { label: 'Bot calls', href: link('/bot-calls'), pages: ['bot-calls'] },
];
/** Admins only: the audit log's API refuses every other role. */
const AUDIT_NAV = { label: 'Audit', href: link('/audit'), pages: ['audit'] as PageName[] };


export interface NavItem {
  label: string;
  href: string;
  current: boolean;
}

/** The bar on top of every page: the page links, Refresh and Sign out (the console's and the portal's). */
export function TopBar({ brand, items, onRefresh, who, onSignOut = () => signOut() }: { brand: string; items: NavItem[]; onRefresh: () => void; who?: string; onSignOut?: () => void }) {
  return (
    <header class="top">
      <span class="brand">{brand}</span>
      <nav aria-label="Pages">
        {items.map((item) => (
          <Link key={item.label} href={item.href} class={item.current ? 'current' : undefined}>
            {item.label}
          </Link>
        ))}
      </nav>
      <span class="spacer" />
      {who && (
        <span class="who" data-testid="signed-in-as">
          {who}
        </span>
      )}
      <button type="button" onClick={onRefresh}>
        Refresh
      </button>
      <button type="button" class="secondary" onClick={onSignOut}>
        Sign out
      </button>
    </header>
  );
}

export function Layout({ page, onRefresh, onSignOut, children }: { page: PageName; onRefresh: () => void; onSignOut: () => void; children: ComponentChildren }) {
  const nav = roleAllows('admin') ? [...NAV, AUDIT_NAV] : NAV;
  const section = nav.find((item) => item.pages.includes(page))?.label ?? 'Not found';
  const identity = currentIdentity();
  useEffect(() => {
    document.title = `${section} · Event callbacks`;
  }, [section]);
  return (
    <>
      <TopBar
        brand="Event callbacks"
        items={nav.map((item) => ({ label: item.label, href: item.href, current: item.pages.includes(page) }))}
        onRefresh={onRefresh}
        who={identity ? `${identity.actor} (${identity.role})` : undefined}
        onSignOut={onSignOut}
      />
      <main class="page">{children}</main>
    </>
  );
}
