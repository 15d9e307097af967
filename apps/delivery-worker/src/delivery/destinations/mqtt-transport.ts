import { randomBytes } from 'node:crypto';
import { connect, type IClientOptions, type MqttClient } from 'mqtt';
import { type BrokerConnection, brokerAddress } from './broker-connection-pool';
import type { OutgoingDelivery } from './destination-transport';
import { type BrokerTarget, parseBrokerUrl, PooledBrokerTransport } from './pooled-broker-transport';
import { redactCredentials } from './transport-outcome';

/** An MQTT destination's URL, parsed: `mqtt(s)://[user:pass@]host:port/<topic>`. */
export interface MqttTarget extends BrokerTarget {
  secure: boolean;
  username: string;
  topic: string;
}

export function parseMqttTarget(url: string): MqttTarget | string {
  const parsed = parseBrokerUrl(url, ['mqtt', 'mqtts'], false);
  if (typeof parsed === 'string') return parsed;
  // A raw `#` ends the URL's path (it starts the fragment): `…/events/#` must not publish to `events/`.
  const topic = url.includes('#') ? '#' : decodeURIComponent(parsed.pathname.slice(1));
  // A publish names one topic: the wildcards are for subscribers only (MQTT 5 §4.7.1).
  if (topic === '' || /[+#\0]/.test(topic)) return 'target must name one topic after the host (mqtt://host:port/<topic>), without + or #';
  const secure = parsed.protocol === 'mqtts:';
  return {
    secure,
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : secure ? 8883 : 1883,
    username: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    topic,
    connectionUrl: `${parsed.protocol}//${parsed.username}:${parsed.password}@${parsed.host}`,
  };
}

class MqttConnection implements BrokerConnection {
  private closing = false;
  private dropped = false;

  constructor(
    readonly client: MqttClient,
    onDrop: (why: string, connection: MqttConnection) => void,
  ) {
    let lastError: string | null = null;
    client.on('error', (error: Error) => {
      lastError = error.message;
    });
    client.on('close', () => {
      if (!this.closing && !this.dropped) onDrop(lastError ?? 'closed by the broker', this);
      this.dropped = true;
    });
  }

  get usable(): boolean {
    return !this.dropped && this.client.connected;
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.client.endAsync(true).catch(() => undefined);
  }

  /** Forced end: mqtt.js destroys the stream without waiting for in-flight PUBACKs, which then fail. */
  destroy(): void {
    this.closing = true;
    this.client.end(true);
  }
}

/** Opens an MQTT 5 session, answering once: CONNACK, or the first error or close. */
function openClient(options: IClientOptions): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const client = connect(options);
    const fail = (error: Error): void => {
      client.removeListener('connect', succeed);
      client.end(true);
      reject(error);
    };
    const succeed = (): void => {
      client.removeListener('error', fail);
      client.removeListener('close', closed);
      resolve(client);
    };
    const closed = (): void => fail(new Error('the broker closed the connection before CONNACK'));
    client.once('connect', succeed);
    client.once('error', fail);
    client.once('close', closed);
  });
}

/**
 * Publishes with MQTT 5 at QoS 1 (CONTRACT §11 `mqtt`): the attempt succeeds on a PUBACK whose reason
 * code is success (or "no matching subscribers"); the `webhook-*` values are user properties. The client
 * does not reconnect by itself: a dropped connection is replaced on the next send.
 */
export class MqttTransport extends PooledBrokerTransport<MqttTarget, MqttConnection> {
  protected readonly label = 'mqtt';
  protected readonly acknowledgement = 'PUBACK from the broker';
  protected readonly parse = parseMqttTarget;

  protected async publish(connection: MqttConnection, broker: MqttTarget, delivery: OutgoingDelivery): Promise<void> {
    const puback = await connection.client.publishAsync(broker.topic, Buffer.from(delivery.body, 'utf8'), {
      qos: 1,
      properties: { contentType: delivery.contentType, userProperties: { ...delivery.signatureHeaders } },
    });
    // mqtt.js rejects failing reason codes itself; this keeps a success from resting on that alone.
    const reasonCode = (puback as { reasonCode?: number } | undefined)?.reasonCode ?? 0;
    if (reasonCode >= 0x80) throw new Error(`the broker answered PUBACK reason code ${reasonCode}`);
  }

  protected async connect(broker: MqttTarget, key: string, connectTimeoutMs: number): Promise<MqttConnection> {
    const address = await brokerAddress(broker.host, this.allowPrivateTargets);
    const client = await openClient({
      protocol: broker.secure ? 'mqtts' : 'mqtt',
      host: address,
      port: broker.port,
      protocolVersion: 5,
      clientId: `event-callbacks-${randomBytes(8).toString('hex')}`,
      clean: true,
      connectTimeout: connectTimeoutMs,
      reconnectPeriod: 0,
      ...(broker.username ? { username: broker.username, password: broker.password } : {}),
      ...(broker.secure ? { servername: broker.host } : {}),
    });
    return new MqttConnection(client, (why, connection) => this.dropped(key, connection, broker, redactCredentials(why, [broker.password])));
  }
}
