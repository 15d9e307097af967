import type { ComponentChildren } from 'preact';
import { link, navigate, segment } from '../router';
import { Mono } from './bits';

/** An ordinary link (open in a new tab works) that navigates inside the page on a plain click. */
export function Link({ href, children, class: className }: { href: string; children: ComponentChildren; class?: string }) {
  const onClick = (event: MouseEvent): void => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} class={className} onClick={onClick}>
      {children}
    </a>
  );
}

/** An account's id, linked to its page in the console. */
export function AccountLink({ id }: { id: number }) {
  return (
    <Link href={link(`/accounts/${segment(id)}`)}>
      <Mono>{id}</Mono>
    </Link>
  );
}
