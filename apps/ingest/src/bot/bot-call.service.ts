import { Inject, Injectable } from '@nestjs/common';
import type { BotCallOutcome, BotWebhookType } from '@app/persistence';
import { type BotAnswerCheck, describeAnswerProblems, validateMessageTriggerAnswer, validateTaskPushAnswer } from '@app/payloads';
import { errorCodeWord, OutboundError, type OutboundHttpClient, type OutboundResponse } from '@app/runtime';
import { unixSeconds } from '@app/signing';
import { buildMessageTriggerCall, buildTaskPushCall, type PreparedBotCall } from './bot-call.builder';
import { BotCallRecorder } from './bot-call.recorder';
import { BOT_HTTP_CLIENT, BOT_ORIGIN_LIMITER } from './bot-http.client';
import type { MessageTriggerRequestDto, TaskPushRequestDto } from './bot-request.dto';
import { type BotWebhookTarget, BotWebhookDirectory } from './bot-webhook.directory';
import type { OriginLimiter } from './origin-limiter';

/** A webhook answer larger than this is off-spec (and is not read further). */
export const MAX_BOT_ANSWER_BYTES = 64 * 1024;
const USER_AGENT = 'event-callbacks-bot/0.1';

/** Where the signing timestamp comes from; a fixed clock makes signatures reproducible. */
export interface BotClock {
  now(): Date;
}
export const BOT_CLOCK = Symbol('BOT_CLOCK');
export const systemClock: BotClock = { now: () => new Date() };

/** HTTP status and JSON body for the bot. */
export interface BotReply {
  status: number;
  body: unknown;
}

interface Outcome {
  outcome: BotCallOutcome;
  status: number;
  /** Set when outcome is `ok`: the validated answer. */
  answer?: unknown;
  error?: string;
  response?: OutboundResponse;
}

/** What both bot calls name: whose webhook, and which one. */
interface BotCallRequest {
  account_id: number;
  integration_name: string;
}

/** What tells the two bot calls apart; the rest of a call (lookup, limits, exchange, record) is the same. */
interface BotCallKind<R extends BotCallRequest> {
  type: BotWebhookType;
  prepare(target: BotWebhookTarget, request: R, timestamp: number): PreparedBotCall;
  validate(parsed: unknown): BotAnswerCheck<unknown>;
  /** The body of a failed call: message trigger and task push answer failures in different shapes. */
  failureBody(status: number, message: string): unknown;
}

/** Errors about the caller's own request (unknown account or webhook) use the ingest shape for both types. */
function requestError(status: number, message: string): { error: string; message: string } {
  return { error: errorCodeWord(status), message };
}

const MESSAGE_TRIGGER: BotCallKind<MessageTriggerRequestDto> = {
  type: 'message_trigger',
  prepare: buildMessageTriggerCall,
  validate: validateMessageTriggerAnswer,
  failureBody: requestError,
};

const TASK_PUSH: BotCallKind<TaskPushRequestDto> = {
  type: 'task_push',
  prepare: buildTaskPushCall,
  validate: validateTaskPushAnswer,
  failureBody: (_status, message) => ({ resCode: -1, resError: message }),
};

/**
 * Calls API users' bot webhooks for the platform's bot, synchronously: one attempt bounded by the
 * webhook's timeout_ms (no retries: the bot is waiting), a cap on calls in flight per origin, and the
 * answer checked against the seed before it is handed on. Every call is recorded.
 */
@Injectable()
export class BotCallService {
  constructor(
    private readonly directory: BotWebhookDirectory,
    private readonly recorder: BotCallRecorder,
    @Inject(BOT_HTTP_CLIENT) private readonly http: OutboundHttpClient,
    @Inject(BOT_ORIGIN_LIMITER) private readonly limiter: OriginLimiter,
    @Inject(BOT_CLOCK) private readonly clock: BotClock,
  ) {}

  messageTrigger(request: MessageTriggerRequestDto): Promise<BotReply> {
    return this.call(MESSAGE_TRIGGER, request);
  }

  taskPush(request: TaskPushRequestDto): Promise<BotReply> {
    return this.call(TASK_PUSH, request);
  }

  private async call<R extends BotCallRequest>(kind: BotCallKind<R>, request: R): Promise<BotReply> {
    const started = performance.now();
    const { account_id: accountId, integration_name: integrationName } = request;
    const target = await this.directory.find(accountId, kind.type, integrationName);
    if (!target) {
      const accountExists = await this.directory.accountExists(accountId);
      const message = accountExists ? `account ${accountId} has no ${kind.type} bot webhook named "${integrationName}"` : `account ${accountId} does not exist`;
      const reply = { status: 404, body: requestError(404, message) };
      const durationMs = Math.round(performance.now() - started);
      if (accountExists) {
        await this.recorder.record({
          ...this.baseRecord(kind.type, request, null),
          requestBody: null,
          responseStatus: null,
          responseBody: null,
          answer: reply.body,
          outcome: 'not_found',
          error: message,
          durationMs,
        });
      } else {
        // bot_calls rows belong to an account, so a call naming an unknown one is only counted.
        this.recorder.observe(kind.type, 'not_found', durationMs);
      }
      return reply;
    }

    const prepared = kind.prepare(target, request, unixSeconds(this.clock.now()));
    const result = await this.exchange(target, prepared, kind.validate);
    const body = result.outcome === 'ok' ? result.answer : kind.failureBody(result.status, result.error ?? 'the webhook call failed');
    await this.recorder.record({
      ...this.baseRecord(kind.type, request, target),
      requestBody: prepared.recordedBody,
      responseStatus: result.response?.status ?? null,
      responseBody: result.response?.body ?? null,
      answer: body,
      outcome: result.outcome,
      error: result.error ?? null,
      durationMs: Math.round(performance.now() - started),
    });
    return { status: result.status, body };
  }

  private baseRecord(type: BotWebhookType, request: BotCallRequest, target: BotWebhookTarget | null) {
    return { accountId: request.account_id, botWebhookId: target?.id ?? null, type, integrationName: request.integration_name, url: target?.url ?? null };
  }

  /** One HTTP exchange and the verdict on its answer. */
  private async exchange(target: BotWebhookTarget, prepared: PreparedBotCall, validate: (parsed: unknown) => BotAnswerCheck<unknown>): Promise<Outcome> {
    const origin = new URL(target.url).origin;
    if (!this.limiter.tryAcquire(origin)) {
      return {
        outcome: 'refused',
        status: 503,
        error: `too many calls in flight to ${origin} (limit ${this.limiter.maxPerOrigin}): the webhook is slow or down`,
      };
    }
    let response: OutboundResponse;
    try {
      response = await this.http.post({
        url: prepared.url,
        headers: { 'content-type': 'application/json', accept: 'application/json', 'user-agent': USER_AGENT },
        body: prepared.body,
        timeoutMs: target.timeoutMs,
        // One byte over the cap tells "exactly at the cap" from "too large".
        maxResponseBytes: MAX_BOT_ANSWER_BYTES + 1,
      });
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      if (error.kind === 'timeout') return { outcome: 'timeout', status: 504, error: `the webhook did not answer within ${target.timeoutMs} ms` };
      if (error.kind === 'refused_target') return { outcome: 'refused', status: 502, error: `the webhook URL was refused: ${error.message}` };
      return { outcome: 'failed', status: 502, error: `the webhook could not be reached: ${error.message}` };
    } finally {
      this.limiter.release(origin);
    }

    if (response.status < 200 || response.status > 299) {
      return { outcome: 'failed', status: 502, error: `the webhook answered HTTP ${response.status}`, response };
    }
    if (response.truncated || Buffer.byteLength(response.body, 'utf8') > MAX_BOT_ANSWER_BYTES) {
      return { outcome: 'invalid_answer', status: 502, error: `the webhook's answer is larger than ${MAX_BOT_ANSWER_BYTES} bytes`, response };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(response.body);
    } catch {
      return { outcome: 'invalid_answer', status: 502, error: "the webhook's answer is not valid JSON", response };
    }
    const verdict = validate(parsed);
    if (!verdict.ok) {
      return { outcome: 'invalid_answer', status: 502, error: `invalid answer from the webhook: ${describeAnswerProblems(verdict.problems)}`, response };
    }
    return { outcome: 'ok', status: 200, answer: verdict.answer, response };
  }
}
