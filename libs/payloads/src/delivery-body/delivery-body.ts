import { CONTENT_TYPE_JSON } from '../actions';
import { CLOUDEVENTS_CONTENT_TYPE, encodeCloudEvent } from './cloudevents';
import { encodeFormBody } from './form-encoder';

/** How a delivery's body is written: the §5 JSON, the §5 form, or a CloudEvents 1.0 structured event (§11). */
export type DeliveryEncoding = 'json' | 'form' | 'cloudevents';

/** A destination's encoding: CloudEvents when its format says so; brokers carry JSON; a webhook's body follows its content type. */
export function deliveryEncodingOf(destination: { type: string; format: string; content_type: string }): DeliveryEncoding {
  if (destination.format === 'cloudevents') return 'cloudevents';
  if (destination.type !== 'webhook') return 'json';
  return destination.content_type.toUpperCase() === CONTENT_TYPE_JSON ? 'json' : 'form';
}

/** What a delivery's body is made of: the event as stored, and where the service says events come from (PUBLIC_URL). */
export interface DeliveryBodySource {
  eventId: string;
  action: string;
  /** The stored message's JSON text, spliced in as is so key order and number spelling stay the sender's. */
  messageText: string;
  acceptedAt: Date;
  source: string;
}

export interface DeliveryBody {
  contentType: 'application/json' | 'application/x-www-form-urlencoded' | typeof CLOUDEVENTS_CONTENT_TYPE;
  body: string;
}

/**
 * The one serialization of a delivery: these exact bytes are signed and sent, and an attempt's stored
 * request body is these bytes rebuilt from the same event (attempts keep the encoding, not the body).
 * A pure function of its input, so the rebuild is byte for byte.
 */
export function encodeDeliveryBody(encoding: DeliveryEncoding, event: DeliveryBodySource): DeliveryBody {
  if (encoding === 'cloudevents') {
    return {
      contentType: CLOUDEVENTS_CONTENT_TYPE,
      body: encodeCloudEvent({ eventId: event.eventId, action: event.action, message: event.messageText, acceptedAt: event.acceptedAt, source: event.source }),
    };
  }
  if (encoding === 'json') {
    return { contentType: 'application/json', body: `{"action":${JSON.stringify(event.action)},"message":${event.messageText}}` };
  }
  return { contentType: 'application/x-www-form-urlencoded', body: encodeFormBody(event.action, JSON.parse(event.messageText)) };
}
