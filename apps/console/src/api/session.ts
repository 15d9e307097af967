/**
 * The admin token lives in this tab's sessionStorage only (gone when the tab closes, never shared with
 * other tabs, never in a URL or cookie). Listeners hear when it is set or dropped.
 */
let KEY = 'admin-token';
/** What a refused token is called on screen. */
export let refusedMessage = 'The admin token was refused; sign in again.';

/** The account portal keeps its session token under a key of its own, so the two never mix in a tab. */
export function useSessionKey(key: string, refused: string): void {
  KEY = key;
  refusedMessage = refused;
}

const listeners = new Set<() => void>();

export function currentToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function signIn(token: string): void {
  sessionStorage.setItem(KEY, token);
  listeners.forEach((listener) => listener());
}

/** `reason` is shown on the sign-in page (e.g. the token was refused mid-session). */
export let signOutReason: string | null = null;

export function signOut(reason: string | null = null): void {
  signOutReason = reason;
  sessionStorage.removeItem(KEY);
  listeners.forEach((listener) => listener());
}

export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}
