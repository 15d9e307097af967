import type { ComponentChildren } from 'preact';
import { navigate } from '../router';

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
