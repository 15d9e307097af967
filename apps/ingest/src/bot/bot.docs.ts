import { applyDecorators } from '@nestjs/common';
import { ApiBody, ApiExtraModels, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { MessageTriggerAnswerDto, TaskPushAnswerDto } from '@app/payloads';
import { ApiErrorBody, ApiErrorResponses, ApiIngestAuth, ApiJsonBodyErrors } from '@app/runtime/docs';
import { MessageTriggerRequestDto, TaskPushRequestDto } from './bot-request.dto';

/* Documentation of `POST /v1/bot/*` (CONTRACT §4, §6): the call in, and what the account's webhook answered. */

const NOT_FOUND = 'The account has no webhook of this type with that integration_name.';
const FAILED = 'The webhook failed, was refused or answered off-spec';

export function ApiBotController(): ClassDecorator {
  return applyDecorators(ApiTags('Bot calls'), ApiIngestAuth(), ApiExtraModels(ApiErrorBody, MessageTriggerAnswerDto, TaskPushAnswerDto));
}

export function ApiMessageTrigger(): MethodDecorator {
  const failure = (status: number, description: string) =>
    ApiResponse({ status, description, content: { 'application/json': { schema: { $ref: getSchemaPath(ApiErrorBody) } } } });
  return applyDecorators(
    ApiOperation({
      summary: "Ask the account's message-trigger webhook",
      description: 'Calls the webhook once (signed, see the `bot-message-trigger` webhook below) and answers with its validated answer. Every call is recorded.',
    }),
    ApiBody({ type: MessageTriggerRequestDto }),
    ApiResponse({ status: 200, description: "The webhook's answer.", type: MessageTriggerAnswerDto }),
    ApiJsonBodyErrors(),
    ApiErrorResponses([404, NOT_FOUND], 422),
    failure(502, `${FAILED}: \`{"error": "bad_gateway", "message": "<why>"}\`.`),
    failure(503, 'Too many calls in flight to that webhook\'s origin, or the database is unavailable.'),
    failure(504, 'The webhook did not answer within its timeout_ms.'),
  );
}

export function ApiTaskPush(): MethodDecorator {
  const failure = (status: number, description: string) =>
    ApiResponse({
      status,
      description,
      content: {
        'application/json': {
          schema: { type: 'object', properties: { resCode: { type: 'integer', enum: [-1] }, resError: { type: 'string' } }, required: ['resCode', 'resError'] },
          example: { resCode: -1, resError: 'the webhook answered HTTP 500' },
        },
      },
    });
  return applyDecorators(
    ApiOperation({
      summary: "Ask the account's task-push webhook",
      description: 'Calls the webhook once (signed, see the `bot-task-push` webhook below) and answers with its validated answer. Every call is recorded.',
    }),
    ApiBody({ type: TaskPushRequestDto }),
    ApiResponse({ status: 200, description: "The webhook's validated answer.", type: TaskPushAnswerDto }),
    ApiJsonBodyErrors(),
    ApiErrorResponses([404, NOT_FOUND], 422),
    failure(502, `${FAILED}: \`{"resCode": -1, "resError": "<why>"}\`.`),
    failure(503, 'Too many calls in flight to that webhook\'s origin.'),
    failure(504, 'The webhook did not answer within its timeout_ms.'),
  );
}
