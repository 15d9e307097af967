import { jetstreamManager, type JetStreamManager, StorageType } from '@nats-io/jetstream';
import type { ConnectionOptions, NatsConnection } from '@nats-io/nats-core';
import { connect as connectUntyped } from '@nats-io/transport-node';
import { type Channel, type ChannelModel, connect as connectAmqp } from 'amqplib';
import { waitFor } from '@app/testing';

// As in the worker's NATS transport: transport-node's declarations name nats-core's types through a
// subpath export this tsconfig's module resolution does not read.
const connectNats = connectUntyped as unknown as (options: ConnectionOptions) => Promise<NatsConnection>;

/** Where a destination of the bench's publishes, as the account's user would read it back. */
export interface BrokerSink {
  /** The destination's `target`. */
  readonly target: string;
  /** Waits until `count` messages arrived; answers the wall-clock ms of the last one. */
  waitForMessages(count: number, timeoutMs: number): Promise<{ count: number; lastAt: number }>;
  close(): Promise<void>;
}

/**
 * A direct exchange and an exclusive queue bound to it, consumed as messages come (no ack): the broker
 * holds them in memory, so the figure is the service's publishing, not the broker's disk.
 */
export class RabbitMqSink implements BrokerSink {
  private received = 0;
  private lastAt = 0;

  private constructor(
    private readonly model: ChannelModel,
    private readonly channel: Channel,
    private readonly exchange: string,
    readonly target: string,
  ) {}

  static async open(brokerUrl: string, name: string): Promise<RabbitMqSink> {
    const model = await connectAmqp(brokerUrl);
    const channel = await model.createChannel();
    await channel.assertExchange(name, 'direct', { durable: false, autoDelete: false });
    const { queue } = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(queue, name, 'events');
    const sink = new RabbitMqSink(model, channel, name, `${brokerUrl}/?exchange=${name}&routing_key=events`);
    await channel.consume(queue, () => {
      sink.received += 1;
      sink.lastAt = Date.now();
    }, { noAck: true });
    return sink;
  }

  waitForMessages(count: number, timeoutMs: number) {
    return waitFor(`${count} messages on exchange ${this.exchange}`, () => {
      if (this.received >= count) return Promise.resolve({ count: this.received, lastAt: this.lastAt });
      throw new Error(`${this.received} arrived`);
    }, { timeoutMs, intervalMs: 100 });
  }

  async close(): Promise<void> {
    await this.channel.deleteExchange(this.exchange).catch(() => undefined);
    await this.model.close();
  }
}

/** A JetStream stream in memory on one subject; its state says how many messages it took and when the last one came. */
export class NatsSink implements BrokerSink {
  private constructor(
    private readonly connection: NatsConnection,
    private readonly manager: JetStreamManager,
    private readonly stream: string,
    readonly target: string,
  ) {}

  static async open(server: string, name: string): Promise<NatsSink> {
    const connection = await connectNats({ servers: server });
    const manager = await jetstreamManager(connection);
    // Memory storage, like the RabbitMQ sink; the stream's own de-duplication (Nats-Msg-Id) stays on.
    await manager.streams.add({ name, subjects: [`${name}.>`], storage: StorageType.Memory });
    return new NatsSink(connection, manager, name, `nats://${server}/${name}.events`);
  }

  waitForMessages(count: number, timeoutMs: number) {
    return waitFor(`${count} messages in stream ${this.stream}`, async () => {
      const { state } = await this.manager.streams.info(this.stream);
      if (state.messages >= count) return { count: state.messages, lastAt: Date.parse(state.last_ts) };
      throw new Error(`${state.messages} arrived`);
    }, { timeoutMs, intervalMs: 100 });
  }

  async close(): Promise<void> {
    await this.manager.streams.delete(this.stream).catch(() => undefined);
    await this.connection.close();
  }
}
