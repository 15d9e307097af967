import { render } from 'preact';
import { signIn, useSessionKey } from '../api/session';
import { openSession } from './portal-api';
import { PortalApp } from './portal-app';
import '../styles.css';

useSessionKey('portal-session', 'Your portal session has ended; open a new portal link.');

/**
 * A portal link carries a one-time code in its fragment (never sent to any server by the browser).
 * It is traded for a session token kept for this tab only, and removed from the address bar at once,
 * so it is neither bookmarked nor shown again.
 */
async function start(root: HTMLElement): Promise<void> {
  const code = location.hash.slice(1);
  let problem: string | null = null;
  if (code) {
    history.replaceState(null, '', `${location.pathname}${location.search}`);
    try {
      signIn((await openSession(code)).token);
    } catch (error) {
      problem = error instanceof Error ? error.message : String(error);
    }
  }
  render(<PortalApp linkProblem={problem} />, root);
}

const root = document.getElementById('app');
if (root) void start(root);
