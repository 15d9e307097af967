import type { EventAction } from '../actions';

/** One problem with one field of a message; `path` is relative to the message, e.g. `cellphones[0].id`. */
export interface MessageProblem {
  path: string;
  problem: string;
}

/**
 * Checks an event's `message` against the seed's table for its action (CONTRACT §4).
 * Returns every problem found; an empty list means the message is valid. Unlisted fields are allowed.
 * PLACEHOLDER: only checks that the message is an object; the payloads work replaces the body.
 */
export function validateEventMessage(action: EventAction, message: unknown): MessageProblem[] {
  void action;
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return [{ path: '', problem: 'message must be an object' }];
  }
  return [];
}
