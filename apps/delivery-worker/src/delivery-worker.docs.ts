import type { ApiDocsInfo } from '@app/runtime/docs';

/** The title and introduction of the worker's /docs (main.ts passes them to bootstrapHttpApp). */
export const DELIVERY_WORKER_DOCS: ApiDocsInfo = {
  title: 'Event callbacks: delivery-worker',
  description: `The delivery worker has no public API: it consumes the delivery queue and sends the callbacks described in the
**Webhooks** section (\`callback\`) to each account's \`push_url\`, signed with Standard Webhooks headers, retried on
\`RETRY_SCHEDULE\`. It also runs the background tasks config-api records (bulk redeliveries, erasures, redaction at rest,
offboarding), taken from the tasks queue or found by its own poll. It serves only health and metrics.`,
};
