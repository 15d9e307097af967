import { getSchemaPath, type PathItemObject, type SchemaObject } from '@nestjs/swagger';
import { OPERATIONAL_ACTIONS, type OperationalAction, type OperationalMessage } from '@app/payloads';

/*
 * The operational events (CONTRACT §14) as the OpenAPI document's `webhooks`: what a destination that
 * lists `Destination_failing`, `Destination_disabled` or `Destination_recovered` in its `actions` receives.
 * The schemas are built from OPERATIONAL_ACTIONS and typed against OperationalMessage, so a field the
 * service adds or renames changes the document (and the e2e test that checks real deliveries against it).
 */

export const OPERATIONAL_MESSAGE_SCHEMA = 'OperationalEventMessage';
export const OPERATIONAL_BODY_SCHEMA = 'OperationalEvent';

const MESSAGE_PROPERTIES: Record<keyof OperationalMessage, SchemaObject> = {
  destination_id: { type: 'string', description: 'The destination the event is about (`primary` for the push URL).', example: 'primary' },
  target: {
    type: 'string',
    nullable: true,
    description: 'Its target as destination views show it: credentials masked (`***`); null when it has none.',
    example: 'https://hooks.example.com/callbacks',
  },
  reason: { type: 'string', description: 'Why, in words: the breaker opening with the last error, the disabling reason, or how it recovered.', example: 'its circuit breaker opened after 5 consecutive failed calls: HTTP 503' },
  at: { type: 'string', format: 'date-time', description: 'When the service noticed it.' },
};

const DESCRIPTIONS: Record<OperationalAction, string> = {
  Destination_failing: "The destination's circuit breaker opened: `BREAKER_FAILURE_THRESHOLD` consecutive calls failed, and its deliveries wait.",
  Destination_disabled: 'The destination was disabled: its calls failed for `ENDPOINT_DISABLE_AFTER`, or an answer named in its `retry.disable_on` came back.',
  Destination_recovered: "The destination recovered: its breaker closed after being open (a call succeeded), or it was enabled again (an operator, the portal or `set_url`).",
};

function bodySchemaName(action: OperationalAction): string {
  return `${OPERATIONAL_BODY_SCHEMA}_${action}`;
}

/** `OperationalEventMessage`, one `{action, message}` body per action and their `oneOf` chosen by `action`. */
export function operationalEventSchemas(): Record<string, SchemaObject> {
  const schemas: Record<string, SchemaObject> = {
    [OPERATIONAL_MESSAGE_SCHEMA]: {
      type: 'object',
      description: 'The message of every operational event.',
      properties: MESSAGE_PROPERTIES,
      required: Object.keys(MESSAGE_PROPERTIES),
      additionalProperties: false,
    },
  };
  const mapping: Record<string, string> = {};
  for (const action of OPERATIONAL_ACTIONS) {
    schemas[bodySchemaName(action)] = {
      type: 'object',
      title: action,
      description: DESCRIPTIONS[action],
      properties: { action: { type: 'string', enum: [action] }, message: { $ref: getSchemaPath(OPERATIONAL_MESSAGE_SCHEMA) } },
      required: ['action', 'message'],
      additionalProperties: false,
    };
    mapping[action] = getSchemaPath(bodySchemaName(action));
  }
  schemas[OPERATIONAL_BODY_SCHEMA] = {
    description: 'An operational event: the service telling the account about one of its own destinations.',
    oneOf: OPERATIONAL_ACTIONS.map((action) => ({ $ref: mapping[action] })),
    discriminator: { propertyName: 'action', mapping },
  };
  return schemas;
}

const DELIVERY = `Sent to each of the account's **other** destinations whose \`actions\` list names this action (never to the
destination it is about, and never to one whose \`actions\` is absent), like any event to that destination: its
type, content type and format (\`cloudevents\` wraps the message as \`data\`), signed with its own secret, retried
on its own retry policy. At most one of each action per destination in 10 minutes. The event is also stored as
one of the account's events (subject \`destination:<id>\`): the admin API, the portal and the pull feed list it,
whatever the account's permissions.`;

function operationalWebhook(action: OperationalAction): PathItemObject {
  const schema = { $ref: getSchemaPath(bodySchemaName(action)) };
  const example = { action, message: { destination_id: 'primary', target: 'https://hooks.example.com/callbacks', reason: 'its circuit breaker opened after 5 consecutive failed calls: HTTP 503', at: '2025-01-01T12:00:00.000Z' } };
  return {
    post: {
      operationId: `operationalEvent${action.replace('Destination_', 'Destination')}`,
      tags: ['Requests the service sends'],
      summary: `Operational event ${action}, to the account's destinations that list it`,
      description: `${DESCRIPTIONS[action]}\n\n${DELIVERY}`,
      requestBody: {
        required: true,
        content: {
          'application/json': { schema, example },
          'application/x-www-form-urlencoded': { schema, encoding: { message: { style: 'deepObject', explode: true } } },
        },
      },
      responses: {
        '2XX': { description: 'Delivered; the answer body is ignored.' },
        default: { description: 'A failed attempt, retried on the destination\'s schedule.' },
      },
    },
  };
}

/** The `webhooks` entries, one per operational action, named by the action. */
export function operationalEventWebhooks(): Record<string, PathItemObject> {
  return Object.fromEntries(OPERATIONAL_ACTIONS.map((action) => [action, operationalWebhook(action)]));
}
