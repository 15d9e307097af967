/** The content type a webhook sends a CloudEvents structured-mode event with (CloudEvents JSON format §3). */
export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json';

export interface CloudEventInput {
  eventId: string;
  action: string;
  /** The stored message text, spliced in as is so its key order and number spelling stay the sender's. */
  message: string;
  acceptedAt: Date;
  /** PUBLIC_URL: the service is the source every event comes from. */
  source: string;
}

/**
 * A CloudEvents 1.0 structured JSON event (CONTRACT §11 `format: "cloudevents"`): `type` is the action,
 * `time` when ingest accepted the event, `data` the message. These bytes are what gets signed and sent.
 */
export function encodeCloudEvent(input: CloudEventInput): string {
  const envelope =
    `{"specversion":"1.0","id":${JSON.stringify(input.eventId)},"source":${JSON.stringify(input.source)},` +
    `"type":${JSON.stringify(input.action)},"time":${JSON.stringify(input.acceptedAt.toISOString())},` +
    `"datacontenttype":"application/json","data":`;
  return `${envelope}${input.message}}`;
}
