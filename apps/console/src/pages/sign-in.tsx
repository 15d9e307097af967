import { useEffect, useState } from 'preact/hooks';
import { checkToken, signInOptions } from '../api/admin';
import type { ApiError } from '../api/client';
import { setIdentity, signIn, signOutReason } from '../api/session';

/** Asks for the admin token and keeps it only after the admin API accepted it. */
export function SignInPage() {
  const [token, setToken] = useState('');
  const [message, setMessage] = useState<string | null>(signOutReason);
  const [checking, setChecking] = useState(false);
  const [sso, setSso] = useState(false);
  useEffect(() => {
    signInOptions().then((options) => setSso(options.sso), () => undefined);
  }, []);
  const submit = (event: Event): void => {
    event.preventDefault();
    const candidate = token.trim();
    if (!candidate) {
      setMessage('Enter the admin token.');
      return;
    }
    setChecking(true);
    setMessage(null);
    checkToken(candidate).then(
      (identity) => {
        signIn(candidate);
        setIdentity(identity);
      },
      (error: ApiError) => {
        setChecking(false);
        setMessage(error.status === 401 ? 'The admin token was refused.' : `Could not check the token: ${error.message}`);
      },
    );
  };
  return (
    <main class="sign-in">
      <h1>Event callbacks console</h1>
      {/* POST, so a form submitted without this script never puts the token in a URL. */}
      <form method="post" onSubmit={submit}>
        <label for="admin-token">Admin token</label>
        <input
          id="admin-token"
          name="admin-token"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(event) => setToken(event.currentTarget.value)}
        />
        <button type="submit" disabled={checking}>
          Sign in
        </button>
        {message && (
          <p class="error" role="alert">
            {message}
          </p>
        )}
        <p class="muted">The token stays in this browser tab only and is sent as the bearer token of each admin API call.</p>
      </form>
      {sso && (
        <p class="sso">
          {/* A plain link: the server sends the browser on to the identity provider and back. */}
          <a class="button" href="/admin/login">
            Sign in with SSO
          </a>
        </p>
      )}
    </main>
  );
}
