import { CLOUDEVENTS_CONTENT_TYPE } from './cloudevents';
import type { DeliveryBody, DeliveryEncoding } from './delivery-body';

/** The content type each encoding is sent with (encodeDeliveryBody's). */
const ENCODING_CONTENT_TYPES: Record<DeliveryEncoding, DeliveryBody['contentType']> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
  cloudevents: CLOUDEVENTS_CONTENT_TYPE,
};

/** What an attempt's row and its event say about a call besides its stored headers. */
interface CallFacts {
  contentType: string;
  eventId: string;
  startedAt: Date;
}

/** The headers every call opens with, in the order it sends them; the three rebuilt from facts go unstored. */
const LEADING = ['content-type', 'user-agent', 'webhook-id', 'webhook-timestamp'] as const;

function rebuilt(facts: CallFacts): Record<'content-type' | 'webhook-id' | 'webhook-timestamp', string> {
  return { 'content-type': facts.contentType, 'webhook-id': facts.eventId, 'webhook-timestamp': String(Math.floor(facts.startedAt.getTime() / 1000)) };
}

/**
 * A call's request headers as its attempt row keeps them: without content-type, webhook-id and
 * webhook-timestamp, which the attempt's encoding, its event and its started_at give back exactly
 * (about 100 bytes less written per attempt). Headers that do not open with the usual four, or whose
 * values differ from what the facts give, are kept whole.
 */
export function headersToStore(sent: Record<string, string>, facts: CallFacts): Record<string, string> {
  const keys = Object.keys(sent);
  const expected = rebuilt(facts);
  const usual = LEADING.every((name, index) => keys[index] === name) && Object.entries(expected).every(([name, value]) => sent[name] === value);
  if (!usual) return sent;
  const { 'content-type': _type, 'webhook-id': _id, 'webhook-timestamp': _timestamp, ...kept } = sent;
  return kept;
}

/**
 * The headers a call sent, from its stored form: a stored set with its content-type (kept whole, or
 * written before attempts were compacted) is shown as stored; otherwise the three are put back in
 * their places. An attempt without encoding (from before the delivery model) kept its headers whole.
 */
export function sentHeaders(stored: Record<string, string>, row: { encoding: DeliveryEncoding | null; startedAt: Date }, eventId: string): Record<string, string> {
  if (row.encoding === null || 'content-type' in stored) return stored;
  const facts = rebuilt({ contentType: ENCODING_CONTENT_TYPES[row.encoding], eventId, startedAt: row.startedAt });
  // A compacted set always kept its user-agent: headersToStore compacts only headers that open with it.
  const { 'user-agent': userAgent, ...rest } = stored;
  return {
    'content-type': facts['content-type'],
    'user-agent': userAgent,
    'webhook-id': facts['webhook-id'],
    'webhook-timestamp': facts['webhook-timestamp'],
    ...rest,
  };
}
