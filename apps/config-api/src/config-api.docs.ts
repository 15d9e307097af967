import type { ApiDocsInfo } from '@app/runtime/docs';

/** The title and introduction of config-api's /docs (main.ts passes them to bootstrapHttpApp). */
export const CONFIG_API_DOCS: ApiDocsInfo = {
  title: 'Event callbacks: config-api',
  description: `The **Open API** (\`/open_api_v1/*\`) lets API users choose where their callbacks go, in which content type and
which events they receive. The **admin API** (\`/admin/v1/*\`) lets operators create accounts, inspect the delivery log,
redeliver and read statistics. The **Webhooks** section describes what the service sends: the callback to \`push_url\`
and the two bot webhook calls.

**Signing an Open API call.** Every call carries \`email\`, \`timestamp\` (Unix seconds), \`nonce\`, \`sign_version=v2\` and
\`sign\` = lowercase hex SHA-256 of \`email&open_api_token&timestamp&nonce&v2\` in its query.

**Open API errors** are \`{"code", "message", "exception": {"message"}}\`:

| code | HTTP | when |
|---|---|---|
| 2059 | 401 | unknown email, wrong sign, or \`sign_version\` not \`v2\` |
| 20621 | 401 | \`timestamp\` missing or not an integer |
| 20622 | 401 | \`timestamp\` more than 300 s away from the server clock |
| 20623 | 401 | \`nonce\` already used by this account within 15 minutes |
| 20624 | 401 | \`nonce\` missing or empty |
| 2000 | 400 | a required body parameter is missing or has a wrong value |
| 2000 | 413 / 415 / 429 / 503 | body too large / not JSON / more than 60 calls a minute / store unavailable |

**Admin errors** are \`{"error": "<code word>", "message", "details"?}\` with 400, 401, 404, 409, 413, 422 or 503.`,
};
