import type { ApiDocsInfo } from '@app/runtime/docs';

/** The title and introduction of ingest's /docs (main.ts passes them to bootstrapHttpApp). */
export const INGEST_DOCS: ApiDocsInfo = {
  title: 'Event callbacks: ingest',
  description: `For the platform's internal services: domain events in (\`/v1/events\`), stored durably before the answer and then
delivered as callbacks; and the bot's calls (\`/v1/bot/*\`), answered by the account's bot webhooks. Every call needs
\`Authorization: Bearer <one of INGEST_TOKEN>\`. Errors are \`{"error": "<code word>", "message", "details"?}\` with 400,
401, 404, 409, 413, 422 or 503 (the bot calls also 502 and 504). The **Webhooks** section describes the requests these
calls cause: the callback to the account's \`push_url\` and the bot webhook calls.`,
};
