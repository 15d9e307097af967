import { validationFailed } from '@app/runtime';

/**
 * The optional body of an event's redelivery (CONTRACT §11): none or `{}` redelivers to every
 * destination that took the event, `{"destination_id"}` only to that one (`primary`: the push_url).
 */
export function readRedeliveryDestination(body: unknown): string | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body !== 'object' || Array.isArray(body)) throw validationFailed([{ path: 'destination_id', problem: 'the body must be an object: {} or {"destination_id"}' }]);
  const fields = body as Record<string, unknown>;
  const unknown = Object.keys(fields).find((key) => key !== 'destination_id');
  if (unknown !== undefined) throw validationFailed([{ path: unknown.slice(0, 64), problem: 'is not a redelivery field (only destination_id)' }]);
  const id = fields.destination_id;
  if (id === undefined) return undefined;
  if (typeof id !== 'string' || !/^(primary|dst_[0-9a-z]{1,40})$/.test(id)) {
    throw validationFailed([{ path: 'destination_id', problem: 'must be "primary" or a destination id (dst_…)' }]);
  }
  return id;
}
