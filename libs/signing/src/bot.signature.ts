import { hexDigest, safeEqual, unixSeconds, withinTolerance } from './digest';

/** Seed, message trigger: lowercase hex SHA-1 of `integrationName&key&timestamp`. */
export function messageTriggerSign(integrationName: string, key: string, timestamp: number | string): string {
  return hexDigest('sha1', `${integrationName}&${key}&${timestamp}`);
}

/** Seed, task push: lowercase hex MD5 of key, taskNodeId, sessionId, timestamp concatenated with no separator. */
export function taskPushSign(key: string, taskNodeId: number | string, sessionId: number | string, timestamp: number | string): string {
  return hexDigest('md5', `${key}${taskNodeId}${sessionId}${timestamp}`);
}

export type BotVerifyResult = { ok: true } | { ok: false; reason: string };

export interface BotVerifyOptions {
  key: string;
  /** Seconds a signed timestamp stays acceptable; default 300. */
  toleranceSeconds?: number;
  now?: Date;
}

type Bag = Record<string, unknown> | undefined | null;

/** The platform's documents have moved `timestamp` and `sign` between the query and the body: accept either. */
function pick(query: Bag, body: Bag, name: string): string | undefined {
  for (const source of [query, body]) {
    const value = source?.[name];
    if (typeof value === 'string' && value !== '') return value;
    if (typeof value === 'number') return String(value);
  }
  return undefined;
}

function checkSigned(timestampText: string | undefined, sign: string | undefined, expected: (timestamp: string) => string, options: BotVerifyOptions): BotVerifyResult {
  if (timestampText === undefined || !/^\d+$/.test(timestampText)) return { ok: false, reason: 'timestamp is missing or not an integer' };
  if (sign === undefined) return { ok: false, reason: 'sign is missing' };
  if (!withinTolerance(Number(timestampText), unixSeconds(options.now), options.toleranceSeconds ?? 300)) {
    return { ok: false, reason: 'timestamp is outside the tolerance window' };
  }
  return safeEqual(sign.toLowerCase(), expected(timestampText)) ? { ok: true } : { ok: false, reason: 'sign does not match' };
}

/** For API users' message-trigger webhooks: checks `sign` against integrationName, key and timestamp. */
export function verifyMessageTriggerRequest(request: { query?: Bag; body?: Bag }, options: BotVerifyOptions & { integrationName?: string }): BotVerifyResult {
  const integrationName = options.integrationName ?? pick(undefined, request.body, 'integrationName');
  if (integrationName === undefined) return { ok: false, reason: 'integrationName is missing' };
  return checkSigned(
    pick(request.query, request.body, 'timestamp'),
    pick(request.query, request.body, 'sign'),
    (timestamp) => messageTriggerSign(integrationName, options.key, timestamp),
    options,
  );
}

/** For API users' task-push webhooks: checks `sign` against key, taskNodeId, sessionId and timestamp. */
export function verifyTaskPushRequest(request: { query?: Bag; body?: Bag }, options: BotVerifyOptions): BotVerifyResult {
  const taskNodeId = pick(undefined, request.body, 'taskNodeId');
  const sessionId = pick(undefined, request.body, 'sessionId');
  if (taskNodeId === undefined || sessionId === undefined) return { ok: false, reason: 'taskNodeId or sessionId is missing' };
  return checkSigned(
    pick(request.query, request.body, 'timestamp'),
    pick(request.query, request.body, 'sign'),
    (timestamp) => taskPushSign(options.key, taskNodeId, sessionId, timestamp),
    options,
  );
}
