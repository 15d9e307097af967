import { type AttemptView, encodeDeliveryBody, sentHeaders } from '@app/payloads';
import type { AttemptRow } from './admin-events.statements';

/** The event an attempt's body is rebuilt from: as stored now (so a redaction shows in every body), and where events come from. */
export interface BodySource {
  eventId: string;
  action: string;
  messageText: string;
  createdAt: Date;
  erased: boolean;
  publicUrl: string;
}

/**
 * An attempt's request body as the admin API shows it. A body the attempt stored (attempts from before
 * the delivery model, or one an erasure emptied) is shown as stored. Otherwise it is rebuilt from the
 * event's message and the attempt's encoding, the same pure function the worker signed and sent
 * (encodeDeliveryBody), so it is byte for byte what went out, or its redacted copy. An erased event's
 * body is gone: an attempt recorded between an erasure's two passes shows none either.
 */
export function attemptRequestBody(row: Pick<AttemptRow, 'request_body' | 'encoding'>, event: BodySource): string {
  if (row.request_body !== null) return row.request_body;
  if (event.erased || row.encoding === null) return '';
  return encodeDeliveryBody(row.encoding, {
    eventId: event.eventId,
    action: event.action,
    messageText: event.messageText,
    acceptedAt: event.createdAt,
    source: event.publicUrl,
  }).body;
}

/** An attempt row as the admin API's attempt view. */
export function attemptView(row: AttemptRow, event: BodySource): AttemptView {
  return {
    attempt: row.attempt,
    series: row.series,
    started_at: row.started_at.toISOString(),
    duration_ms: row.duration_ms,
    url: row.url,
    request_headers: sentHeaders(row.request_headers, { encoding: row.encoding, startedAt: row.started_at }, event.eventId),
    request_body: attemptRequestBody(row, event),
    response_status: row.response_status,
    response_headers: row.response_headers,
    response_body: row.response_body,
    error: row.error,
  };
}
