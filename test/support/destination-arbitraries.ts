import fc from 'fast-check';
import { EVENT_ACTIONS } from '@app/payloads';
import { encodeAny, hostileJson, hostileText } from './fuzz-arbitraries';

/*
 * Destination bodies (CONTRACT §11) close enough to valid that they reach every check: the right field
 * names with values drawn from real types, targets of each scheme, filters with allowed and refused
 * operators, auth objects with hostile members, mixed with anything at all.
 */

const host = fc.constantFrom('hooks.example.com', '127.0.0.1', '[::1]', '10.0.0.1', 'localhost', '127.1', '%31%32%37.0.0.1', 'no-such-host.invalid', '', 'a'.repeat(300));
const scheme = fc.constantFrom('http', 'https', 'amqp', 'amqps', 'nats', 'mqtt', 'mqtts', 'ftp', 'javascript', 'file');
const userinfo = fc.oneof(fc.constant(''), fc.constant('u:p@'), fc.constant('token@'), hostileText.map((text) => `${encodeAny(text)}:x@`));
const pathPart = fc.oneof(fc.constant(''), fc.constant('/events'), fc.constant('/a/+/#'), fc.constant('/events.>'), hostileText.map((text) => `/${text}`));
const queryPart = fc.oneof(
  fc.constant(''),
  fc.constant('?exchange=e&routing_key=k'),
  fc.constant('?exchange=&routing_key='),
  fc.constant('?exchange=e&exchange=f&routing_key=k'),
  hostileText.map((text) => `?exchange=${text}&routing_key=${encodeAny(text)}`),
);
const target = fc.oneof(
  fc.tuple(scheme, userinfo, host, fc.constantFrom('', ':5672', ':0', ':99999', ':x'), pathPart, queryPart).map(([s, u, h, p, path, q]) => `${s}://${u}${h}${p}${path}${q}`),
  hostileText,
  hostileJson,
);

const operand = fc.oneof(fc.jsonValue({ maxDepth: 2 }), hostileJson);
const operator = fc.constantFrom('$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$where', '$regex', '$elemMatch', '$expr', '$', '$and', '$or', '__proto__', 'constructor.prototype');
const filter: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  query: fc.oneof(
    { depthSize: 'small' },
    fc.dictionary(fc.oneof(fc.constantFrom('id', 'organization.id', 'a..b', '', 'x.__proto__'), operator, hostileText), fc.oneof(operand, fc.dictionary(operator, operand, { maxKeys: 3 }))),
    fc.record({ $and: fc.array(tie('query'), { maxLength: 3 }) }),
    fc.record({ $or: fc.oneof(fc.array(tie('query'), { maxLength: 3 }), operand) }),
    operand,
  ),
})).query;

const pem = fc.oneof(fc.constant('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'), fc.constant('-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----'), hostileText, hostileJson);
const auth = fc.oneof(
  fc.record({ type: fc.constant('header'), name: fc.oneof(fc.constantFrom('X-Key', 'webhook-id', 'Connection', 'bad name', ''), hostileText), value: fc.oneof(hostileText, hostileJson) }, { requiredKeys: [] }),
  fc.record({ type: fc.constant('oauth2'), token_url: target, client_id: fc.oneof(hostileText, hostileJson), client_secret: fc.oneof(hostileText, hostileJson), scope: hostileJson }, { requiredKeys: [] }),
  fc.record({ type: fc.constant('mtls'), certificate: pem, private_key: pem, ca: pem }, { requiredKeys: [] }),
  hostileJson,
);

export const destinationBody: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.record(
    {
      type: fc.oneof(fc.constantFrom('webhook', 'rabbitmq', 'nats', 'mqtt', 'WEBHOOK'), hostileJson),
      target,
      actions: fc.oneof(fc.constant(null), fc.array(fc.oneof(fc.constantFrom(...EVENT_ACTIONS), hostileText), { maxLength: 4 }), hostileJson),
      filter: fc.oneof(fc.constant(null), filter),
      content_type: fc.oneof(fc.constantFrom('JSON', 'json', 'application/x-www-form-urlencoded'), hostileJson),
      format: fc.oneof(fc.constantFrom('udesk', 'cloudevents'), hostileJson),
      auth: fc.oneof(fc.constant(null), auth),
      ordering: fc.oneof(fc.constantFrom('none', 'subject'), hostileJson),
      max_per_second: fc.oneof(fc.integer({ min: -5, max: 20_000 }), fc.constant(null), hostileJson),
    },
    { requiredKeys: [] },
  ) },
  { weight: 1, arbitrary: hostileJson },
);
