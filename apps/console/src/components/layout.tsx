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

export function Layout({ page, onRefresh, children }: { page: PageName; onRefresh: () => void; children: ComponentChildren }) {
  const section = NAV.find((item) => item.pages.includes(page))?.label ?? 'Not found';
  useEffect(() => {
    document.title = `${section} · Event callbacks`;
  }, [section]);
  return (
    <>
      <header class="top">
        <span class="brand">Event callbacks</span>
        <nav aria-label="Pages">
          {NAV.map((item) => (
            <Link key={item.label} href={item.href} class={item.pages.includes(page) ? 'current' : undefined}>
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
      <main class="page">{children}</main>
    </>
  );
}
