/**
 * Bodies of the bot webhook calls the service sends (CONTRACT §6): ingest builds them, and the /docs
 * models (libs/runtime/src/docs/outgoing-requests.models.ts) implement them, so neither drifts alone.
 * Optional fields are sent only when the bot gave them.
 */
export interface MessageTriggerWebhookCall {
  integrationName: string;
  regex: string;
  questionContent: string;
  extra?: Record<string, unknown>;
  customerExtra?: Record<string, unknown>;
}

/** Signed in the body: `sign` is the MD5 of key, taskNodeId, sessionId and timestamp. */
export interface TaskPushWebhookCall {
  taskNodeId: number;
  sessionId: number;
  timestamp: number;
  sign: string;
  variables?: Record<string, string>;
  customerExtra?: Record<string, unknown>;
}
