import fc from 'fast-check';
import { destinationTargetProblem, shownTarget } from './destination-target.validation';

describe('destinationTargetProblem (private targets allowed: no DNS)', () => {
  it.each([
    ['webhook', 'https://hooks.example.com/in'],
    ['rabbitmq', 'amqp://u:p@mq.example.com:5672/%2F?exchange=events&routing_key=udesk'],
    ['rabbitmq', 'amqps://mq.example.com/prod?exchange=events&routing_key='],
    ['nats', 'nats://nats.example.com:4222/events.customers'],
    ['nats', 'nats://token@nats.example.com/events'],
    ['mqtt', 'mqtt://broker.example.com:1883/udesk/events'],
    ['mqtts', 'mqtts://u:p@broker.example.com/udesk'],
  ] as const)('accepts a %s target %s', async (type, target) => {
    expect(await destinationTargetProblem(type === 'mqtts' ? 'mqtt' : type, target, true)).toBeNull();
  });

  it.each([
    ['webhook', 'amqp://mq.example.com/?exchange=e&routing_key=k', 'must use http or https'],
    ['rabbitmq', 'amqp://mq.example.com/?exchange=e&routing_key=k&heartbeat=5', 'has an unknown query parameter heartbeat (only exchange and routing_key)'],
    ['rabbitmq', 'amqp://mq.example.com/?exchange=&routing_key=k', 'exchange must name the exchange to publish to'],
    ['rabbitmq', 'amqp://mq.example.com/a/b?exchange=e&routing_key=k', 'must have at most one path segment (the vhost)'],
    ['nats', 'nats://nats.example.com/a..b', 'subject must not have empty tokens (..)'],
    ['nats', 'nats://nats.example.com/a b', 'subject must not contain spaces or wildcards (* >)'],
    ['nats', 'nats://nats.example.com/a?x=1', 'must not carry a query or a fragment'],
    ['mqtt', 'mqtt://broker.example.com/a/#', 'topic must not contain wildcards (+ #)'],
    ['mqtt', 'mqtt:///topic', 'has no host'],
  ] as const)('refuses a %s target %s', async (type, target, problem) => {
    expect(await destinationTargetProblem(type, target, true)).toBe(problem);
  });

  it('answers a problem or null for any text, never throwing', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('webhook', 'rabbitmq', 'nats', 'mqtt' as const), fc.oneof(fc.string(), fc.webUrl(), fc.string().map((text) => `amqp://${text}`)), async (type, target) => {
        const problem = await destinationTargetProblem(type, target, true);
        expect(problem === null || typeof problem === 'string').toBe(true);
      }),
    );
  });
});

describe('shownTarget', () => {
  it.each([
    ['rabbitmq', 'amqp://user:secret@mq.example.com:5672/v?exchange=e&routing_key=k', 'amqp://user:***@mq.example.com:5672/v?exchange=e&routing_key=k'],
    ['nats', 'nats://sometoken@nats.example.com:4222/s', 'nats://***@nats.example.com:4222/s'],
    ['mqtt', 'mqtt://broker.example.com/t', 'mqtt://broker.example.com/t'],
    ['webhook', 'https://hooks.example.com/in?x=1', 'https://hooks.example.com/in?x=1'],
  ] as const)('shows a %s target without its password', (type, target, shown) => {
    expect(shownTarget(type, target)).toBe(shown);
  });
});
