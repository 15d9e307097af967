import { DomainError } from '@app/runtime';

/** Stored ids are printable ASCII of at most 128 characters; anything else cannot exist (and a NUL would upset PostgreSQL). */
export function knownShapeOrNotFound(eventId: string): string {
  if (eventId.length > 128 || !/^[\x21-\x7e]+$/.test(eventId)) throw new DomainError('not_found', 'event does not exist');
  return eventId;
}
