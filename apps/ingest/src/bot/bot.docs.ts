import { applyDecorators, type Type } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiResponse, ApiTags, type ContentObject, getSchemaPath } from '@nestjs/swagger';
import { MessageTriggerAnswerDto, TaskPushAnswerDto } from '@app/payloads';
import { ApiErrorBody, ApiErrorResponses, ApiIngestAuth, ApiJsonBodyErrors } from '@app/runtime/docs';
import { MessageTriggerRequestDto, TaskPushRequestDto } from './bot-request.dto';

/* Documentation of `POST /v1/bot/*` (CONTRACT §4, §6): the call in, and what the account's webhook answered. */

const NOT_FOUND = 'The account has no webhook of this type with that integration_name.';
const FAILED = 'The webhook failed, was refused or answered off-spec';

export function ApiBotController(): ClassDecorator {
  return applyDecorators(ApiTags('Bot calls'), ApiIngestAuth(), ApiExtraModels(ApiErrorBody, MessageTriggerAnswerDto, TaskPushAnswerDto));
}

/** What tells the two bot calls' documentation apart; the responses around it are the same for both. */
interface BotCallDocs {
  /** The route's last segment, which also names its outgoing webhook (`bot-<route>`). */
  route: 'message-trigger' | 'task-push';
  request: Type;
  answer: Type;
  answered: string;
  /** The body of a failed call, in the call's own shape, and how its 502 reads. */
  failureContent: ContentObject;
  failedBody: string;
  busy: string;
}

function ApiBotCall(call: BotCallDocs): MethodDecorator {
  const failure = (status: number, description: string) => ApiResponse({ status, description, content: call.failureContent });
  return applyDecorators(
    ApiOperation({
      summary: `Ask the account's ${call.route} webhook`,
      description: `Calls the webhook once (signed, see the \`bot-${call.route}\` webhook below) and answers with its validated answer. Every call is recorded.`,
    }),
    ApiBody({ type: call.request }),
    ApiResponse({ status: 200, description: call.answered, type: call.answer }),
    ApiJsonBodyErrors(),
    ApiErrorResponses([404, NOT_FOUND], 422),
    failure(502, `${FAILED}: ${call.failedBody}.`),
    failure(503, call.busy),
    failure(504, 'The webhook did not answer within its timeout_ms.'),
  );
}

export function ApiMessageTrigger(): MethodDecorator {
  return ApiBotCall({
    route: 'message-trigger',
    request: MessageTriggerRequestDto,
    answer: MessageTriggerAnswerDto,
    answered: "The webhook's answer.",
    failureContent: { 'application/json': { schema: { $ref: getSchemaPath(ApiErrorBody) } } },
    failedBody: '`{"error": "bad_gateway", "message": "<why>"}`',
    busy: 'Too many calls in flight to that webhook\'s origin, or the database is unavailable.',
  });
}

export function ApiTaskPush(): MethodDecorator {
  return ApiBotCall({
    route: 'task-push',
    request: TaskPushRequestDto,
    answer: TaskPushAnswerDto,
    answered: "The webhook's validated answer.",
    failureContent: {
      'application/json': {
        schema: { type: 'object', properties: { resCode: { type: 'integer', enum: [-1] }, resError: { type: 'string' } }, required: ['resCode', 'resError'] },
        example: { resCode: -1, resError: 'the webhook answered HTTP 500' },
      },
    },
    failedBody: '`{"resCode": -1, "resError": "<why>"}`',
    busy: 'Too many calls in flight to that webhook\'s origin.',
  });
}
