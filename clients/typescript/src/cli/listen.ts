/** `event-callbacks listen`: follows the feed and forwards each new event in feed order, one at a time. */
import { setTimeout as delay } from 'node:timers/promises';
import { EventCallbacks } from '../event-callbacks.js';
import type { ListenCommand, ReplayCommand } from './arguments.js';
import { CommandFailed, feedEnd, FeedUnavailable, feedPage, findEvent } from './feed.js';
import { forwardEvent } from './forward.js';
import { attemptLine } from './output.js';
import { type Place, readPlace, writePlace } from './state.js';

/** Events asked for per feed call: the most the feed gives, so catching up spends few of the 60 calls a minute. */
export const PAGE_LIMIT = 500;
const UNAVAILABLE_WAITS_MS = [1000, 2000, 5000, 10_000];

export interface Output {
  /** One line per forwarding attempt (stdout). */
  line(text: string): void;
  /** What listen is doing (stderr). */
  note(text: string): void;
}

function clientOf(command: ListenCommand | ReplayCommand): EventCallbacks {
  return new EventCallbacks({ baseUrl: command.url, email: command.email, token: command.token });
}

/**
 * Where to start: the --state file's place when it exists, else right after --since, else the feed's
 * end ("from now": the feed is paged through without forwarding anything).
 */
async function startingPlace(client: EventCallbacks, command: ListenCommand, output: Output, signal: AbortSignal): Promise<Place> {
  const saved = command.state ? readPlace(command.state) : undefined;
  if (saved) {
    output.note(`resuming where ${command.state} left off${saved.last_event_id ? ` (after ${saved.last_event_id})` : ''}`);
    return saved;
  }
  if (command.since) {
    const found = await findEvent(client, command.since, PAGE_LIMIT, signal);
    if (!found) throw new CommandFailed(`event ${command.since} is not in the account's feed`);
    output.note(`starting after ${command.since}`);
    return { after: found.after ?? null, last_event_id: command.since };
  }
  return { after: await feedEnd(client, PAGE_LIMIT, signal), last_event_id: null };
}

export async function listen(command: ListenCommand, output: Output, signal: AbortSignal): Promise<void> {
  const client = clientOf(command);
  const sleep = (ms: number): Promise<void> => delay(ms, undefined, { signal });
  let place = await startingPlace(client, command, output, signal);
  const keep = (next: Place): void => {
    place = next;
    if (command.state) writePlace(command.state, place);
  };
  keep(place);
  output.note(`listening to the feed of ${command.email} at ${command.url}; forwarding to ${command.forward.href}${command.secret ? ' signed' : ''} (Ctrl+C stops)`);
  let unavailable = 0;
  for (;;) {
    let page;
    try {
      page = await feedPage(client, place.after ?? undefined, PAGE_LIMIT, signal);
      unavailable = 0;
    } catch (error) {
      if (!(error instanceof FeedUnavailable)) throw error;
      const wait = error.retryAfterMs ?? UNAVAILABLE_WAITS_MS[Math.min(unavailable, UNAVAILABLE_WAITS_MS.length - 1)];
      unavailable += 1;
      output.note(`${error.message}; asking again in ${wait / 1000} s`);
      await sleep(wait);
      continue;
    }
    let items = page.items;
    if (place.last_event_id !== null) {
      const handled = items.findIndex((item) => item.event_id === place.last_event_id);
      if (handled >= 0) items = items.slice(handled + 1);
    }
    for (const item of items) {
      await forwardEvent(item, {
        forward: command.forward,
        secret: command.secret,
        signal,
        sleep,
        report: (event, attempt, retryInMs) => output.line(attemptLine(event, attempt, retryInMs)),
      });
      keep({ after: place.after, last_event_id: item.event_id });
    }
    // An empty page may carry a new cursor too.
    if (page.next_cursor !== place.after) keep({ after: page.next_cursor, last_event_id: null });
    // A full page: more may be waiting right away; otherwise this is the feed's end for now.
    if (page.items.length < PAGE_LIMIT) await sleep(command.intervalMs);
  }
}

/** `event-callbacks replay <event_id>`: finds the event in the feed and forwards it once (with the retries). */
export async function replay(command: ReplayCommand, output: Output, signal: AbortSignal): Promise<void> {
  const client = clientOf(command);
  const found = await findEvent(client, command.eventId, PAGE_LIMIT, signal);
  if (!found) throw new CommandFailed(`event ${command.eventId} is not in the account's feed`);
  const sent = await forwardEvent(found.item, {
    forward: command.forward,
    secret: command.secret,
    signal,
    sleep: (ms) => delay(ms, undefined, { signal }),
    report: (event, attempt, retryInMs) => output.line(attemptLine(event, attempt, retryInMs)),
  });
  if (!sent) throw new CommandFailed(`${command.forward.href} did not take ${command.eventId}`);
}
