import { type ChannelModel, type ConfirmChannel, connect } from 'amqplib';
import { type BrokerConnection, brokerAddress } from './broker-connection-pool';
import type { OutgoingDelivery } from './destination-transport';
import { type BrokerTarget, parseBrokerUrl, PooledBrokerTransport } from './pooled-broker-transport';
import { redactCredentials } from './transport-outcome';

/**
 * A RabbitMQ destination's URL, parsed: `amqp(s)://user:pass@host:port/vhost?exchange=X&routing_key=K`.
 * Its connectionUrl is everything but exchange and routing key: the connection is shared by the destinations it serves.
 */
export interface RabbitMqTarget extends BrokerTarget {
  secure: boolean;
  username: string;
  vhost: string;
  exchange: string;
  routingKey: string;
}

export function parseRabbitMqTarget(url: string): RabbitMqTarget | string {
  const parsed = parseBrokerUrl(url, ['amqp', 'amqps'], true);
  if (typeof parsed === 'string') return parsed;
  const secure = parsed.protocol === 'amqps:';
  const vhost = parsed.pathname.length > 1 ? decodeURIComponent(parsed.pathname.slice(1)) : '/';
  return {
    secure,
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : secure ? 5671 : 5672,
    username: decodeURIComponent(parsed.username) || 'guest',
    password: decodeURIComponent(parsed.password) || 'guest',
    vhost,
    exchange: parsed.searchParams.get('exchange') ?? '',
    routingKey: parsed.searchParams.get('routing_key') ?? '',
    connectionUrl: `${parsed.protocol}//${parsed.username}:${parsed.password}@${parsed.host}${parsed.pathname}`,
  };
}

interface ExchangeChannel {
  channel: Promise<ConfirmChannel>;
  /** The broker's error that closed it (e.g. `404 (NOT-FOUND) … no exchange 'x'`): the reason its pending confirms failed. */
  closedBecause: string | null;
}

/**
 * One broker connection, with a confirm channel per exchange: the broker closes a channel on an error
 * (a 404 for a missing exchange), which fails every confirm pending on it, so one destination's missing
 * exchange must not fail another destination's messages on the same broker. A closed channel is opened
 * again on the next send.
 */
class RabbitMqConnection implements BrokerConnection {
  private readonly channels = new Map<string, ExchangeChannel>();
  private dropped = false;
  private closing = false;

  constructor(
    private readonly model: ChannelModel,
    onDrop: (why: string, connection: RabbitMqConnection) => void,
  ) {
    model.on('error', () => undefined);
    model.on('close', (error?: Error) => {
      if (!this.closing && !this.dropped) onDrop(error ? error.message : 'closed by the broker', this);
      this.dropped = true;
    });
  }

  get usable(): boolean {
    return !this.dropped;
  }

  confirmChannel(exchange: string): ExchangeChannel {
    let open = this.channels.get(exchange);
    if (!open) {
      const entry: ExchangeChannel = { channel: this.model.createConfirmChannel(), closedBecause: null };
      const forget = (): void => {
        if (this.channels.get(exchange) === entry) this.channels.delete(exchange);
      };
      entry.channel.then(
        (channel) => {
          channel.on('error', (error: Error) => {
            entry.closedBecause = error.message;
          });
          channel.on('close', forget);
        },
        forget,
      );
      this.channels.set(exchange, entry);
      open = entry;
    }
    return open;
  }

  async close(): Promise<void> {
    this.dropped = true;
    this.closing = true;
    await this.model.close().catch(() => undefined);
  }

  /**
   * The socket under amqplib's connection, destroyed with an error: amqplib hears the error (not a plain
   * close, which it misses), ends the connection and fails every confirm pending on its channels.
   */
  destroy(): void {
    this.dropped = true;
    this.closing = true;
    (this.model.connection as unknown as { stream?: { destroy(error?: Error): void } }).stream?.destroy(new Error('no confirm from the broker within the time-out'));
  }
}

/**
 * Publishes to the user's exchange (CONTRACT §11 `rabbitmq`), persistent, with publisher confirms: the
 * attempt succeeds when the broker confirms. The exchange is never declared or checked: publishing to
 * one that does not exist is the broker's 404, reported as the attempt's reason.
 */
export class RabbitMqTransport extends PooledBrokerTransport<RabbitMqTarget, RabbitMqConnection> {
  protected readonly label = 'rabbitmq';
  protected readonly acknowledgement = 'confirm from the broker';
  protected readonly parse = parseRabbitMqTarget;

  protected async publish(connection: RabbitMqConnection, broker: RabbitMqTarget, delivery: OutgoingDelivery): Promise<void> {
    const exchange = connection.confirmChannel(broker.exchange);
    const channel = await exchange.channel;
    await new Promise<void>((resolve, reject) => {
      channel.publish(
        broker.exchange,
        broker.routingKey,
        Buffer.from(delivery.body, 'utf8'),
        { persistent: true, messageId: delivery.eventId, contentType: delivery.contentType, headers: { ...delivery.signatureHeaders } },
        (error: unknown) => (error ? reject(new Error(exchange.closedBecause ?? (error instanceof Error ? error.message : 'the broker did not confirm'))) : resolve()),
      );
    });
  }

  protected async connect(broker: RabbitMqTarget, key: string, connectTimeoutMs: number): Promise<RabbitMqConnection> {
    const address = await brokerAddress(broker.host, this.allowPrivateTargets);
    const model = await connect(
      { protocol: broker.secure ? 'amqps' : 'amqp', hostname: address, port: broker.port, username: broker.username, password: broker.password, vhost: broker.vhost, heartbeat: 30 },
      { timeout: connectTimeoutMs, ...(broker.secure ? { servername: broker.host } : {}) },
    );
    return new RabbitMqConnection(model, (why, connection) => this.dropped(key, connection, broker, redactCredentials(why, [broker.password])));
  }
}
