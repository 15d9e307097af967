import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath, PartialType } from '@nestjs/swagger';
import {
  CONTENT_TYPE_FORM,
  CONTENT_TYPE_JSON,
  DESTINATION_AUTH_TYPES,
  DESTINATION_FORMATS,
  DESTINATION_TYPES,
  FILTER_FIELD_OPERATORS,
  FILTER_GROUP_OPERATORS,
  LOGGED_ACTIONS,
  MAX_DESTINATIONS_PER_ACCOUNT,
} from '@app/payloads';
import { ApiMaxPerSecondProperty, ApiOrderingProperty } from './delivery-options.docs';
import { TOO_MANY_PROBLEM } from './destinations.service';
import { PRIMARY_FIELDS } from './destination-body.validation';

/* Documentation of destinations (CONTRACT §11), shared by the Open API, the portal and the admin API. */

export const DESTINATIONS_DESCRIPTION =
  `Up to ${MAX_DESTINATIONS_PER_ACCOUNT} destinations besides the primary (the push_url, id \`primary\`). Each takes the events whose permission is on, ` +
  'whose action is in `actions` and whose message matches `filter`, each with its own attempts, retries, breaker, pace, order and secret. ' +
  'What each type receives: `webhook` an HTTP POST signed as the primary (`webhook-id`, `webhook-timestamp`, `webhook-signature` headers; body by `content_type`, or ' +
  '`application/cloudevents+json` with format `cloudevents`); `rabbitmq` a persistent message published with confirms to the exchange and routing key of the URL ' +
  '(AMQP `message_id` the event id, `content_type` application/json, the three webhook-* values as AMQP headers); `nats` a JetStream publish acked by the stream ' +
  '(`Nats-Msg-Id` the event id, the webhook-* values as NATS headers); `mqtt` an MQTT 5 QoS 1 publish (the webhook-* values as user properties). ' +
  'The body is the §5 JSON `{"action","message"}` or a CloudEvents 1.0 structured event, and the signature is over exactly those bytes.';

const TARGET_DESCRIPTION =
  'A URL by type: `webhook` http(s)://…; `rabbitmq` amqp(s)://user:pass@host:port/vhost?exchange=X&routing_key=K (the exchange is yours and is never declared); ' +
  '`nats` nats://[user:pass@]host:port/<subject>; `mqtt` mqtt(s)://[user:pass@]host:port/<topic>. Private addresses are refused unless ALLOW_PRIVATE_TARGETS. ' +
  'Stored sealed; views show any password as `***`.';

const FILTER_DESCRIPTION =
  `A MongoDB-style query on the message: \`{"<dotted path>": <value> | {${FILTER_FIELD_OPERATORS.map((op) => `"${op}"`).join('|')}: …}, ` +
  `${FILTER_GROUP_OPERATORS.map((op) => `"${op}": […]`).join(', ')}}\`; any other operator is refused naming it. null: every message.`;

export class DestinationHeaderAuth {
  @ApiProperty({ enum: ['header'] }) type!: 'header';
  @ApiProperty({ description: 'An HTTP header name; not webhook-*, hop-by-hop, Host, Content-Length or Content-Type.', example: 'X-Api-Key' }) name!: string;
  @ApiProperty({ description: 'Sent on every call; never shown back.', example: 'k-1234' }) value!: string;
}

export class DestinationOauth2Auth {
  @ApiProperty({ enum: ['oauth2'] }) type!: 'oauth2';
  @ApiProperty({ description: 'http(s) token endpoint (client credentials grant); private addresses refused as for targets.', example: 'https://auth.example.com/oauth/token' }) token_url!: string;
  @ApiProperty({ example: 'callbacks' }) client_id!: string;
  @ApiProperty({ description: 'Never shown back.' }) client_secret!: string;
  @ApiProperty({ required: false, example: 'events:write' }) scope?: string;
}

export class DestinationMtlsAuth {
  @ApiProperty({ enum: ['mtls'] }) type!: 'mtls';
  @ApiProperty({ description: 'PEM client certificate presented on every TLS connection (the target must be https).' }) certificate!: string;
  @ApiProperty({ description: 'Its unencrypted PEM private key, which must belong to the certificate. Never shown back.' }) private_key!: string;
  @ApiProperty({ required: false, description: 'PEM certificate(s) also trusted for the target’s own certificate.' }) ca?: string;
}

const AUTH_SCHEMA = {
  nullable: true,
  oneOf: [{ $ref: getSchemaPath(DestinationHeaderAuth) }, { $ref: getSchemaPath(DestinationOauth2Auth) }, { $ref: getSchemaPath(DestinationMtlsAuth) }],
  description: 'Webhooks only; null: none. Stored sealed; views show `{"type"}` only.',
};

@ApiExtraModels(DestinationHeaderAuth, DestinationOauth2Auth, DestinationMtlsAuth)
export class DestinationBody {
  @ApiProperty({ enum: [...DESTINATION_TYPES], example: 'rabbitmq' })
  type!: string;

  @ApiProperty({ description: TARGET_DESCRIPTION, example: 'amqps://events:secret@mq.example.com:5671/prod?exchange=callbacks&routing_key=udesk' })
  target!: string;

  @ApiProperty({ required: false, nullable: true, type: [String], enum: [...LOGGED_ACTIONS], description: 'null or absent: every action of the seed. The operational actions (`Destination_failing`, `Destination_disabled`, `Destination_recovered`) reach only a destination whose list names them.', example: ['Customer_create', 'Customer_update'] })
  actions?: string[] | null;

  @ApiPropertyOptional({ nullable: true, type: 'object', additionalProperties: true, description: `${FILTER_DESCRIPTION} Example: \`{"organization.id": {"$in": [12, 13]}}\`.` })
  filter?: Record<string, unknown> | null;

  @ApiProperty({ required: false, enum: [CONTENT_TYPE_JSON, CONTENT_TYPE_FORM], description: 'Webhook body (brokers always get JSON). Default JSON.' })
  content_type?: string;

  @ApiProperty({ required: false, enum: [...DESTINATION_FORMATS], description: '`udesk` (default): the §5 body; `cloudevents`: a CloudEvents 1.0 structured JSON event.' })
  format?: string;

  @ApiProperty({ required: false, ...AUTH_SCHEMA })
  auth?: unknown;

  @ApiProperty({ required: false, enum: ['none', 'subject'], description: 'As §9, per destination. Default none.' })
  ordering?: string;

  @ApiProperty({ required: false, type: 'integer', nullable: true, minimum: 1, maximum: 10_000, description: 'As §9, per destination. Default null.' })
  max_per_second?: number | null;
}

/** PUT: any of the fields; those not sent keep their value. */
export class DestinationPutBody extends PartialType(DestinationBody) {}

export class DestinationAuthView {
  @ApiProperty({ enum: [...DESTINATION_AUTH_TYPES] })
  type!: string;
}

export class DestinationStateModel {
  @ApiProperty({ enum: ['closed', 'open', 'half_open'], description: "The destination's circuit breaker." })
  breaker!: string;

  @ApiProperty({ type: 'string', format: 'date-time', nullable: true, description: 'Set when the disabling clock ran out (or its retry policy disabled it); a new target enables it again.' })
  disabled_at!: string | null;

  @ApiProperty({ description: 'Deliveries waiting without a call: held while it is paused or while its breaker is open.', example: 0 })
  held!: number;
}

export class DestinationRetryModel {
  @ApiProperty({ type: [String], example: ['10s', '1m', '5m', '30m', '1h'], description: 'Waits between calls after the first (0 to 20, each 100ms to 7d); `[]`: one call only. Absent from a body: unchanged; new destinations start with RETRY_SCHEDULE.' })
  schedule!: string[];

  @ApiProperty({ type: [Number], example: [404], description: 'HTTP statuses (400–499, not 408 or 429) that end the delivery at once: `failed`, "HTTP <status>: not retried". Empty for brokers.' })
  stop_on!: number[];

  @ApiProperty({ type: [Number], example: [410], description: 'Statuses that end it the same way and disable the destination at once. Empty for brokers; a status may not be in both lists.' })
  disable_on!: number[];
}

export class DestinationModel {
  @ApiProperty({ example: 'dst_5f0c1e0a9b7d4c3e8a2b6d1f', description: '`primary` for the push_url.' })
  id!: string;

  @ApiProperty({ enum: [...DESTINATION_TYPES] })
  type!: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'The target with any password shown as `***` (null: the primary before set_url).', example: 'amqps://events:***@mq.example.com:5671/prod?exchange=callbacks&routing_key=udesk' })
  target!: string | null;

  @ApiProperty({ type: [String], nullable: true })
  actions!: string[] | null;

  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true })
  filter!: Record<string, unknown> | null;

  @ApiProperty({ enum: [CONTENT_TYPE_JSON, CONTENT_TYPE_FORM] })
  content_type!: string;

  @ApiProperty({ enum: [...DESTINATION_FORMATS] })
  format!: string;

  @ApiProperty({ type: DestinationAuthView, nullable: true, description: 'The auth type only: credentials are never shown back.' })
  auth!: DestinationAuthView | null;

  @ApiOrderingProperty()
  ordering!: string;

  @ApiMaxPerSecondProperty()
  max_per_second!: number | null;

  @ApiProperty({ description: 'While true, deliveries to it wait without spending attempts.' })
  paused!: boolean;

  @ApiProperty({ type: DestinationRetryModel })
  retry!: DestinationRetryModel;

  @ApiProperty({ type: 'string', nullable: true, example: '1h', description: 'Its deadline from 1s to 30d, counted from when ingest accepted the event; a delivery not delivered by then ends `expired`. null: none.' })
  expire_after!: string | null;

  @ApiProperty({ type: DestinationStateModel })
  state!: DestinationStateModel;

  @ApiProperty({ required: false, example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'Its own signing secret, only in the answer that created it.' })
  signing_secret?: string;
}

export class DestinationList {
  @ApiProperty({ type: [DestinationModel], description: 'The primary first, then the others in the order they were created.' })
  items!: DestinationModel[];
}

/** Examples of the 2000 texts, as the Open API words them. */
export const DESTINATION_ERRORS = {
  type: 'type: must be "webhook", "rabbitmq", "nats", "mqtt"',
  target: 'target: must be amqp(s)://user:pass@host:port/vhost?exchange=X&routing_key=K',
  privateTarget: 'target: points to a non-public address or to a host that does not resolve',
  filter: 'filter: operator $where is not allowed',
  authName: 'auth.name: must not be a webhook-* header: the service signs with those',
  pem: 'auth.private_key: must be an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----)',
  tooMany: `destinations: ${TOO_MANY_PROBLEM}`,
};

export const DESTINATION_PUT_ERRORS = { ...DESTINATION_ERRORS, primary: `type: is not a field the primary destination takes here (${PRIMARY_FIELDS.join(', ')})`, unknown: 'id: destination dst_000000000000000000000000 does not exist' };

export const ADMIN_DESTINATION_PROBLEM = 'A field is wrong (`details` names each: type, target, actions, filter, content_type, format, auth.*, ordering, max_per_second, or destinations when the account has 20 already).';
