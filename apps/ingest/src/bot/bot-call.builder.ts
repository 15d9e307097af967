import type { MessageTriggerWebhookCall, TaskPushWebhookCall } from '@app/payloads';
import { messageTriggerSign, taskPushSign } from '@app/signing';
import type { MessageTriggerRequestDto, TaskPushRequestDto } from './bot-request.dto';

/** What the call needs from a configured webhook. */
export interface SigningTarget {
  name: string;
  url: string;
  key: string;
}

/** One outgoing bot call: the bytes sent, and the same body with the signature redacted for the call log. */
export interface PreparedBotCall {
  url: string;
  body: string;
  recordedBody: string;
}

export const REDACTED = '[redacted]';

/**
 * Appends `timestamp` and `sign` after whatever query the configured URL already has, leaving that
 * query's text as the user wrote it (URLSearchParams would re-encode it). The fragment is never sent.
 */
export function appendSignedQuery(url: string, timestamp: number, sign: string): string {
  const parsed = new URL(url);
  parsed.hash = '';
  const base = parsed.toString();
  const separator = base.endsWith('?') || base.endsWith('&') ? '' : base.includes('?') ? '&' : '?';
  return `${base}${separator}timestamp=${timestamp}&sign=${sign}`;
}

/** Optional fields are sent only when given; null is treated as absent. */
function optional<T>(name: string, value: T | null | undefined): Record<string, T> {
  return value === undefined || value === null ? {} : { [name]: value };
}

/** CONTRACT §6 message trigger: signed in the query, `timestamp` in Unix seconds. */
export function buildMessageTriggerCall(target: SigningTarget, request: MessageTriggerRequestDto, timestamp: number): PreparedBotCall {
  const call: MessageTriggerWebhookCall = {
    integrationName: target.name,
    regex: request.regex,
    questionContent: request.questionContent,
    ...optional('extra', request.extra),
    ...optional('customerExtra', request.customerExtra),
  };
  const body = JSON.stringify(call);
  const sign = messageTriggerSign(target.name, target.key, timestamp);
  // The body carries no secret; the signed URL is not logged (the call log keeps the configured URL).
  return { url: appendSignedQuery(target.url, timestamp, sign), body, recordedBody: body };
}

/** CONTRACT §6 task push: signed in the body. */
export function buildTaskPushCall(target: SigningTarget, request: TaskPushRequestDto, timestamp: number): PreparedBotCall {
  const sign = taskPushSign(target.key, request.taskNodeId, request.sessionId, timestamp);
  const fields = (signature: string): TaskPushWebhookCall => ({
    taskNodeId: request.taskNodeId,
    sessionId: request.sessionId,
    timestamp,
    sign: signature,
    ...optional('variables', request.variables),
    ...optional('customerExtra', request.customerExtra),
  });
  return { url: target.url, body: JSON.stringify(fields(sign)), recordedBody: JSON.stringify(fields(REDACTED)) };
}
