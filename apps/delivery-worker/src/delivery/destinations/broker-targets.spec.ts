import { parseMqttTarget } from './mqtt-transport';
import { parseNatsTarget } from './nats-transport';
import { parseRabbitMqTarget } from './rabbitmq-transport';
import { redactCredentials } from './transport-outcome';
import { authHeaderNameProblem } from './webhook-transport';

describe('broker target URLs (CONTRACT §11)', () => {
  it('reads a RabbitMQ target: credentials, vhost, exchange and routing key', () => {
    expect(parseRabbitMqTarget('amqp://app:p%40ss@mq.example.com:5673/sales?exchange=events&routing_key=customer.created')).toMatchObject({
      secure: false,
      host: 'mq.example.com',
      port: 5673,
      username: 'app',
      password: 'p@ss',
      vhost: 'sales',
      exchange: 'events',
      routingKey: 'customer.created',
    });
    expect(parseRabbitMqTarget('amqps://mq.example.com/%2F?exchange=x')).toMatchObject({ secure: true, port: 5671, vhost: '/' });
    expect(parseRabbitMqTarget('amqp://mq.example.com?exchange=x')).toMatchObject({ vhost: '/' });
  });

  it('shares one connection key across exchanges of the same broker, not across passwords', () => {
    const key = (url: string) => (parseRabbitMqTarget(url) as { connectionUrl: string }).connectionUrl;
    expect(key('amqp://u:p@h:5672/v?exchange=a')).toBe(key('amqp://u:p@h:5672/v?exchange=b&routing_key=k'));
    expect(key('amqp://u:p@h:5672/v?exchange=a')).not.toBe(key('amqp://u:q@h:5672/v?exchange=a'));
  });

  it('refuses what it cannot publish to, naming the problem', () => {
    expect(parseRabbitMqTarget('http://h/?exchange=x')).toBe('target must use amqp or amqps');
    expect(parseRabbitMqTarget('amqp://h/?exchange=x&routing_key=a.#')).toBe('target must not contain a raw # (write %23)');
    expect(parseNatsTarget('nats://h:4222')).toMatch(/one subject/);
    expect(parseNatsTarget('nats://h:4222/orders.>')).toMatch(/one subject/);
    expect(parseNatsTarget('nats://h:4222/orders..created')).toMatch(/one subject/);
    expect(parseMqttTarget('mqtt://h:1883/')).toMatch(/one topic/);
    expect(parseMqttTarget('mqtt://h:1883/a/#')).toMatch(/one topic/);
    expect(parseMqttTarget('mqtt://h:1883/a/+/b')).toMatch(/one topic/);
    expect(parseMqttTarget('not a url')).toBe('target is not a valid URL');
  });

  it('reads NATS and MQTT targets', () => {
    expect(parseNatsTarget('nats://u:p@nats.example.com/orders.created')).toMatchObject({ host: 'nats.example.com', port: 4222, subject: 'orders.created', username: 'u', password: 'p' });
    expect(parseMqttTarget('mqtts://u:p@mqtt.example.com/factory/line%201')).toMatchObject({ secure: true, port: 8883, topic: 'factory/line 1', password: 'p' });
  });
});

describe('authHeaderNameProblem', () => {
  it('allows ordinary header names', () => {
    expect(authHeaderNameProblem('Authorization')).toBeNull();
    expect(authHeaderNameProblem('X-Api-Key')).toBeNull();
  });

  it('refuses signature, hop-by-hop and framing headers and invalid names', () => {
    expect(authHeaderNameProblem('Webhook-Id')).toBe('auth.name webhook-id is one of the webhook-* signature headers');
    expect(authHeaderNameProblem('Transfer-Encoding')).toBe('auth.name transfer-encoding is a hop-by-hop header');
    expect(authHeaderNameProblem('Connection')).toMatch(/hop-by-hop/);
    expect(authHeaderNameProblem('Content-Length')).toMatch(/set by the service/);
    expect(authHeaderNameProblem('X Key')).toBe('auth.name is not a valid header name');
  });
});

describe('redactCredentials', () => {
  it('masks every occurrence of each credential', () => {
    expect(redactCredentials('login s3cret failed (s3cret)', ['s3cret', undefined])).toBe('login *** failed (***)');
  });

  it('leaves very short values alone rather than mangling the text', () => {
    expect(redactCredentials('a bad day', ['a'])).toBe('a bad day');
  });
});
