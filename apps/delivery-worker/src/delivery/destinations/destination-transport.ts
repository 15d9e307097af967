import type { OutboundFailureKind } from '@app/runtime';

/**
 * What every destination transport (webhook, RabbitMQ, NATS, MQTT; CONTRACT §11) is given and answers.
 * Words of this folder: a *target* is where one destination sends (its unsealed URL and auth), a
 * *delivery* is the exact signed bytes of one attempt, an *outcome* is what the attempt became. A
 * transport never throws for anything the target does: a refusal, a hang or a dropped connection is an
 * outcome with `ok: false` and a `reason` that never carries a credential.
 */

/** What every transport gets: the exact bytes to send and the three signature values. */
export interface OutgoingDelivery {
  eventId: string; // the event's event_id (AMQP message_id, Nats-Msg-Id)
  body: string; // exactly the signed bytes
  contentType: string; // 'application/json' | form | 'application/cloudevents+json'
  signatureHeaders: { 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string };
  /** Headers a webhook also sends (a W3C traceparent when CALLBACK_TRACEPARENT is on); brokers ignore them. */
  extraHeaders?: Record<string, string>;
}

export interface DestinationTarget {
  id: string; // destination id (caches/pools/oauth token keyed by it)
  type: 'webhook' | 'rabbitmq' | 'nats' | 'mqtt';
  url: string; // the unsealed target
  auth: DestinationAuth | null; // unsealed, webhooks only
}

export type DestinationAuth =
  | { type: 'header'; name: string; value: string }
  | { type: 'oauth2'; token_url: string; client_id: string; client_secret: string; scope?: string }
  | { type: 'mtls'; certificate: string; private_key: string; ca?: string };

export type TransportOutcome =
  | { ok: true; durationMs: number; status?: number; responseBody?: string | null; responseHeaders?: Record<string, string> }
  | {
      ok: false;
      durationMs: number;
      reason: string;
      status?: number;
      responseBody?: string | null;
      responseHeaders?: Record<string, string>;
      retryAfterMs?: number;
      /** What kind of failure a call that got no answer met: a refused target or an invalid URL says nothing of the endpoint's health. */
      failure?: OutboundFailureKind;
    };

export interface DestinationTransport {
  send(target: DestinationTarget, delivery: OutgoingDelivery, timeoutMs: number): Promise<TransportOutcome>;
}

export type DestinationType = DestinationTarget['type'];
