import type { Type } from '@nestjs/common';
import { getSchemaPath, type ParameterObject, type PathItemObject, type SchemaObject } from '@nestjs/swagger';
import { EVENT_ACTIONS, MESSAGE_CLASSES, MSG_CONTENT_DTOS, MessageTriggerAnswerDto, TaskPushAnswerDto } from '@app/payloads';
import { MessageTriggerWebhookBody, TaskPushWebhookBody } from './outgoing-requests.models';

/** Models the `webhooks` section refers to; buildApiDocument registers them as extra models. */
export const OUTGOING_REQUEST_MODELS: Type<unknown>[] = [
  MessageTriggerWebhookBody,
  TaskPushWebhookBody,
  MessageTriggerAnswerDto,
  TaskPushAnswerDto,
  ...new Set(Object.values(MESSAGE_CLASSES)),
  ...new Set(Object.values(MSG_CONTENT_DTOS)),
];

const CALLBACK_BODY = 'CallbackBody';

/**
 * `{action, message}` with the message schema of each action (the seed's tables, from the payload DTOs
 * that ingest validates with), as one schema per action and a `oneOf` chosen by `action`.
 */
export function callbackBodySchemas(): Record<string, SchemaObject> {
  const schemas: Record<string, SchemaObject> = {};
  const mapping: Record<string, string> = {};
  for (const action of EVENT_ACTIONS) {
    const name = `${CALLBACK_BODY}_${action}`;
    schemas[name] = {
      type: 'object',
      title: action,
      properties: { action: { type: 'string', enum: [action] }, message: { $ref: getSchemaPath(MESSAGE_CLASSES[action]) } },
      required: ['action', 'message'],
    };
    mapping[action] = getSchemaPath(name);
  }
  schemas[CALLBACK_BODY] = {
    description: 'Which event happened (`action`) and its data (`message`: the fields the seed lists for that action; fields it does not list are passed on unchanged).',
    oneOf: EVENT_ACTIONS.map((action) => ({ $ref: mapping[action] })),
    discriminator: { propertyName: 'action', mapping },
  };
  return schemas;
}

const OUTGOING_TAG = 'Requests the service sends';

const CALLBACK_DESCRIPTION = `Sent by the delivery worker for every event the account receives (its permission for the action is on and a
\`push_url\` is set through the Open API \`set_url\`).

**Body.** \`{action, message}\` in the account's push content type:
- \`application/x-www-form-urlencoded\` (the default): Rails-style nested brackets,
  \`action=Customer_create&message[id]=1&message[tags][]=vip&message[cellphones][0][id]=1\`; arrays of scalars as
  \`key[]=v\` repeated, arrays of objects with indices, \`null\` as \`key=\`, booleans \`true\`/\`false\`, empty arrays and
  objects left out; percent-encoded per the WHATWG form rules (UTF-8). Rack, PHP and the \`qs\` package read it back.
- \`application/json\` (content type \`JSON\`): \`{"action":"…","message":{…}}\`.

**Signature** ([Standard Webhooks](https://www.standardwebhooks.com/), verifiable with its published libraries):
\`webhook-signature\` is \`v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>\` where key is the
base64-decoded part of the account's \`signing_secret\` after \`whsec_\`. During a secret rotation (24 hours, or until
the operator revokes the previous secret) two signatures are sent, space separated: accept the request when either matches.

**Delivery.** Any 2xx answer within \`DELIVERY_TIMEOUT_MS\` (10 s) counts as delivered; the body is ignored. Anything
else (another status, a redirect, a time-out, a connection error) is a failed attempt, recorded and retried on
\`RETRY_SCHEDULE\` (10s, 1m, 5m, 30m, 1h, 3h, 6h, 12h); after the last one the event is \`failed\`. Redirects are not
followed. Delivery is at least once: dedupe on \`webhook-id\`, which is the same on every attempt.`;

function header(name: string, description: string, example: string, pattern?: string): ParameterObject {
  return { name, in: 'header', required: true, description, schema: { type: 'string', ...(pattern ? { pattern } : {}) }, example };
}

function json(schema: Type<unknown>): { 'application/json': { schema: { $ref: string } } } {
  return { 'application/json': { schema: { $ref: getSchemaPath(schema) } } };
}

const callback: PathItemObject = {
  post: {
    operationId: 'callbackToPushUrl',
    tags: [OUTGOING_TAG],
    summary: "Callback: POST {action, message} to the account's push_url",
    description: CALLBACK_DESCRIPTION,
    parameters: [
      header('webhook-id', 'The event id, the same on every attempt of this event: receivers dedupe on it.', 'evt_01HZY3M4K2Q9V7'),
      header('webhook-timestamp', 'Unix seconds of this attempt; reject values far from your clock (replay).', '1700000000', '^[0-9]+$'),
      header(
        'webhook-signature',
        'One or two (during a rotation) space-separated `v1,<base64 signature>` values.',
        'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
        '^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)?$',
      ),
      header('User-Agent', 'The sending system and its version.', 'event-callbacks/0.1.0'),
    ],
    requestBody: {
      required: true,
      content: {
        'application/x-www-form-urlencoded': {
          schema: { $ref: getSchemaPath(CALLBACK_BODY) },
          encoding: { message: { style: 'deepObject', explode: true } },
          example: { action: 'Customer_create', message: { id: 1, nick_name: 'Ann', tags: ['vip'] } },
        },
        'application/json': {
          schema: { $ref: getSchemaPath(CALLBACK_BODY) },
          example: { action: 'Customer_create', message: { id: 1, nick_name: 'Ann', tags: ['vip'] } },
        },
      },
    },
    responses: {
      '2XX': { description: 'Delivered; the answer body is ignored.' },
      default: { description: 'Any other status, a redirect, a time-out or a connection error: a failed attempt, retried on the schedule.' },
    },
  },
};

const messageTrigger: PathItemObject = {
  post: {
    operationId: 'botMessageTriggerWebhook',
    tags: [OUTGOING_TAG],
    summary: 'Bot webhook, message trigger: POST <url>?timestamp=<T>&sign=<S>',
    description: `Sent by ingest when the platform's bot calls \`POST /v1/bot/message-trigger\`, to the account's message-trigger
webhook of that \`integration_name\` (configured with \`POST /admin/v1/accounts/{id}/bot-webhooks\`). \`timestamp\` and
\`sign\` are appended to any query the configured URL already has. One attempt, bounded by the webhook's \`timeout_ms\`
(default 5000); no retries (the bot is waiting). Every call is recorded (\`GET /admin/v1/bot-calls\`).`,
    parameters: [
      { name: 'timestamp', in: 'query', required: true, description: 'Unix seconds when the call was signed.', schema: { type: 'integer' }, example: 1496631984 },
      {
        name: 'sign',
        in: 'query',
        required: true,
        description:
          'Lowercase hex SHA-1 of `integrationName&key&timestamp`. Test vector: `对接一&221b368d7f5f597867f525971f28ff75&1496631984` → `96d8271cd705d3f134d215e9b3c27bb73f1132ed`.',
        schema: { type: 'string', pattern: '^[0-9a-f]{40}$' },
        example: '96d8271cd705d3f134d215e9b3c27bb73f1132ed',
      },
    ],
    requestBody: { required: true, content: json(MessageTriggerWebhookBody) },
    responses: {
      '2XX': { description: 'The answer, handed to the bot as is (200 `{"answerContent"}`).', content: json(MessageTriggerAnswerDto) },
      default: { description: 'Anything else, or an answer off this schema: the bot gets 502 (504 on time-out).' },
    },
  },
};

const taskPush: PathItemObject = {
  post: {
    operationId: 'botTaskPushWebhook',
    tags: [OUTGOING_TAG],
    summary: 'Bot webhook, task push: POST <url> (signed in the body)',
    description: `Sent by ingest when the platform's bot calls \`POST /v1/bot/task-push\`, to the account's task-push webhook of that
\`integration_name\`. One attempt, bounded by the webhook's \`timeout_ms\` (default 5000); no retries. The answer is
checked against the seed's response table and its Message structures (every \`msgType\` and its \`msgContent\` shape;
\`routeType\` 1 or 2 when present). Every call is recorded.`,
    requestBody: { required: true, content: json(TaskPushWebhookBody) },
    responses: {
      '2XX': { description: 'The validated answer, handed to the bot.', content: json(TaskPushAnswerDto) },
      default: { description: 'Anything else, or an answer off this schema: the bot gets 502 (504 on time-out) `{"resCode": -1, "resError"}`.' },
    },
  },
};

/** OpenAPI 3.1 `webhooks`: the requests this service makes to URLs that API users register. */
export const OUTGOING_REQUESTS: Record<string, PathItemObject> = {
  callback,
  'bot-message-trigger': messageTrigger,
  'bot-task-push': taskPush,
};
