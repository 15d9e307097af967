export { EventCallbacks, type EventCallbacksOptions } from './event-callbacks.js';
export { openApiSign, signedQuery, signRequest, SIGN_VERSION, type Credentials, type SignedQuery } from './signing.js';
export {
  DEFAULT_TOLERANCE_SECONDS,
  signWebhook,
  verifyWebhook,
  webhookSignature,
  WebhookVerificationError,
  type WebhookHeaders,
  type WebhookHeaderSource,
} from './webhooks.js';
export { OpenApiOperations } from './generated/sdk.gen.js';
export type * from './generated/types.gen.js';
