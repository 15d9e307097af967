// A real OpenID Connect provider (oidc-provider) on a loopback port, for the single sign-on tests.
// It is ESM-only, so it runs as its own process: `node oidc-provider-server.mjs <client json>`; it prints
// `{"issuer": "..."}` on its first line once it listens. Sign-in needs no form: the next interaction
// signs in the user last named with POST /test/next-user {"sub", "claims"} (claims go into the ID token).
import { Buffer } from 'node:buffer';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const client = JSON.parse(process.argv[2]);
const users = new Map();
let nextUser = null;

const server = createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [client],
  cookies: { keys: ['oidc-provider-test-cookie-key-0123456789'] },
  // The roles claim rides in the ID token with the openid scope, as enterprise providers do.
  claims: { openid: ['sub', 'roles', 'groups'], email: ['email', 'email_verified'], profile: ['name'] },
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  features: { devInteractions: { enabled: false } },
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...(users.get(sub) ?? {}) }) }),
  ttl: { Session: 600, Interaction: 600, Grant: 600, AuthorizationCode: 60, IdToken: 600, AccessToken: 600 },
});
provider.on('server_error', (_ctx, error) => process.stderr.write(`oidc-provider: ${error.stack}\n`));

async function readJson(request) {
  const chunks = [];
  for await (const chunk of request) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

const callback = provider.callback();
server.on('request', (request, response) => {
  void (async () => {
    if (request.method === 'POST' && request.url === '/test/next-user') {
      nextUser = await readJson(request);
      users.set(nextUser.sub, nextUser.claims);
      response.writeHead(204).end();
      return;
    }
    if (request.url?.startsWith('/interaction/')) {
      const details = await provider.interactionDetails(request, response);
      if (!nextUser) {
        response.writeHead(409, { 'content-type': 'text/plain' }).end('no user set with POST /test/next-user');
        return;
      }
      const grant = new provider.Grant({ accountId: nextUser.sub, clientId: details.params.client_id });
      grant.addOIDCScope(String(details.params.scope));
      const grantId = await grant.save();
      await provider.interactionFinished(request, response, { login: { accountId: nextUser.sub }, consent: { grantId } }, { mergeWithLastSubmission: false });
      return;
    }
    callback(request, response);
  })().catch((error) => {
    process.stderr.write(`oidc test server: ${error.stack}\n`);
    if (!response.headersSent) response.writeHead(500).end();
  });
});

process.stdout.write(`${JSON.stringify({ issuer })}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
