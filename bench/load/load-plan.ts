import { messageTriggerSign, taskPushSign } from '@app/signing';
import { SAMPLE_MESSAGES } from '@app/payloads';

/** What the load generator sends: one body per request, ids unique within the run. */
export type BodySpec =
  /** `POST /v1/events`, event ids `<tag>-<n>`, accounts taken in turn. */
  | { kind: 'event'; tag: string; accounts: number[] }
  /**
   * `POST /v1/events/batch` with `size` events per request. With `subjects`, the events are
   * `Customer_update` whose `message.id` cycles over that many customers (event n is about customer
   * 1 + n mod subjects), so ordering "subject" has sequences to keep.
   */
  | { kind: 'batch'; tag: string; accounts: number[]; size: number; subjects?: number }
  | { kind: 'message-trigger'; accountId: number; integrationName: string }
  | { kind: 'task-push'; accountId: number; integrationName: string }
  /** The bot webhook called directly, signed as the service signs it: the webhook's own latency. */
  | { kind: 'direct-message-trigger'; integrationName: string; key: string }
  | { kind: 'direct-task-push'; key: string };

export type LoadMode =
  /** `inFlight` requests at all times, until `total` requests were sent or `durationMs` passed. */
  | { kind: 'concurrency'; inFlight: number; total?: number; durationMs?: number }
  /** Requests started at a steady `perSecond`, whatever the answers' latency. */
  | { kind: 'rate'; perSecond: number; durationMs: number };

export interface LoadPlan {
  /** Base URLs taken in turn (several ingest processes). */
  targets: string[];
  path: string;
  headers: Record<string, string>;
  body: BodySpec;
  mode: LoadMode;
  /** Keep-alive connections per target. */
  connections: number;
  /** Record the send time of every event id (for POST sent → callback arrives). */
  recordSends?: boolean;
  /** Hard limit for the whole run, in-flight requests included. */
  deadlineMs: number;
}

export interface LatencySummary {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

export interface LoadResult {
  requests: number;
  /** Requests answered 2xx. */
  ok: number;
  /** Items the service accepted: 2xx single requests, or batch results with status "accepted". */
  accepted: number;
  statuses: Record<string, number>;
  errors: number;
  firstError: string | null;
  startedAt: number;
  elapsedMs: number;
  /** Request latency in ms (send → full answer). */
  latency: LatencySummary;
  sends?: { ids: string[]; at: number[] };
  timedOut: boolean;
}

export interface BuiltRequest {
  body: string;
  /** Event ids this request carries (empty for bot calls). */
  ids: string[];
  query?: string;
}

/** Builds request bodies cheaply: the sample message is serialized once and spliced in. */
export function bodyBuilder(spec: BodySpec): (sequence: number) => BuiltRequest {
  const message = JSON.stringify(SAMPLE_MESSAGES.Customer_create);
  // The update message without its `{"id":…`: the customer id is spliced in per event.
  const updateTail = JSON.stringify({ ...SAMPLE_MESSAGES.Customer_update, id: undefined }).slice(1);
  const subjects = spec.kind === 'batch' ? spec.subjects : undefined;
  const event = (accounts: number[], tag: string, n: number): { json: string; id: string } => {
    const id = `${tag}-${n}`;
    const account = accounts[n % accounts.length] ?? 0;
    if (subjects === undefined) return { id, json: `{"account_id":${account},"action":"Customer_create","event_id":"${id}","message":${message}}` };
    return { id, json: `{"account_id":${account},"action":"Customer_update","event_id":"${id}","message":{"id":${1 + (n % subjects)},${updateTail}}` };
  };
  switch (spec.kind) {
    case 'event':
      return (n) => {
        const built = event(spec.accounts, spec.tag, n);
        return { body: built.json, ids: [built.id] };
      };
    case 'batch':
      return (n) => {
        const items = Array.from({ length: spec.size }, (_, index) => event(spec.accounts, spec.tag, n * spec.size + index));
        return { body: `{"events":[${items.map((item) => item.json).join(',')}]}`, ids: items.map((item) => item.id) };
      };
    case 'message-trigger':
      return (n) => ({
        body: JSON.stringify({ account_id: spec.accountId, integration_name: spec.integrationName, regex: 'price', questionContent: `what is the price? ${n}` }),
        ids: [],
      });
    case 'task-push':
      return (n) => ({
        body: JSON.stringify({ account_id: spec.accountId, integration_name: spec.integrationName, taskNodeId: 100, sessionId: n, variables: { step: '1' } }),
        ids: [],
      });
    case 'direct-message-trigger':
      return (n) => {
        const timestamp = Math.floor(Date.now() / 1000);
        return {
          body: JSON.stringify({ integrationName: spec.integrationName, regex: 'price', questionContent: `what is the price? ${n}` }),
          ids: [],
          query: `timestamp=${timestamp}&sign=${messageTriggerSign(spec.integrationName, spec.key, timestamp)}`,
        };
      };
    case 'direct-task-push':
      return (n) => {
        const timestamp = Math.floor(Date.now() / 1000);
        const sign = taskPushSign(spec.key, 100, n, timestamp);
        return { body: JSON.stringify({ taskNodeId: 100, sessionId: n, timestamp, sign, variables: { step: '1' } }), ids: [] };
      };
  }
}
