import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { signOut } from '../api/session';
import { link, type PageName } from '../router';
import { Link } from './link';

const NAV: { label: string; href: string; pages: PageName[] }[] = [
  { label: 'Overview', href: link(''), pages: ['overview'] },
  { label: 'Events', href: link('/events'), pages: ['events', 'event'] },
  { label: 'Accounts', href: link('/accounts'), pages: ['accounts', 'account'] },
  { label: 'Bot calls', href: link('/bot-calls'), pages: ['bot-calls'] },
];

export interface NavItem {
  label: string;
  href: string;
  current: boolean;
}

/** The bar on top of every page: the page links, Refresh and Sign out (the console's and the portal's). */
export function TopBar({ brand, items, onRefresh }: { brand: string; items: NavItem[]; onRefresh: () => void }) {
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
      <button type="button" onClick={onRefresh}>
        Refresh
      </button>
      <button type="button" class="secondary" onClick={() => signOut()}>
        Sign out
      </button>
    </header>
  );
}

export function Layout({ page, onRefresh, children }: { page: PageName; onRefresh: () => void; children: ComponentChildren }) {
  const section = NAV.find((item) => item.pages.includes(page))?.label ?? 'Not found';
  useEffect(() => {
    document.title = `${section} · Event callbacks`;
  }, [section]);
  return (
    <>
      <TopBar brand="Event callbacks" items={NAV.map((item) => ({ label: item.label, href: item.href, current: item.pages.includes(page) }))} onRefresh={onRefresh} />
      <main class="page">{children}</main>
    </>
  );
}
