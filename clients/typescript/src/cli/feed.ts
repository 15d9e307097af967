/** Reading the account's pull feed through the client, with the command line's view of failures. */
import { setTimeout as delay } from 'node:timers/promises';
import type { EventCallbacks } from '../event-callbacks.js';
import type { FeedAnswer, FeedItemView } from '../generated/types.gen.js';

/** The service refused the credentials (401): exit status 3. */
export class CredentialsRefused extends Error {
  override readonly name = 'CredentialsRefused';
}

/** Anything else that ends the command: exit status 1. */
export class CommandFailed extends Error {
  override readonly name = 'CommandFailed';
}

/** A failure worth trying again (the service down, 429, 5xx), with how long to wait when it said so. */
export class FeedUnavailable extends Error {
  override readonly name = 'FeedUnavailable';
  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

export type FeedItem = FeedItemView;

/** Waits past the Open API's rate limit this many times in a row before giving up on a feed call. */
const RATE_LIMITED_WAITS = 10;

/**
 * One page of the feed after `after` (undefined: from the oldest kept event). A 429 is waited out for
 * the `Retry-After` the service gives (paging through a long feed can spend the 60 calls a minute).
 */
export async function feedPage(client: EventCallbacks, after: string | undefined, limit: number, signal?: AbortSignal): Promise<FeedAnswer> {
  for (let waits = 0; ; waits += 1) {
    try {
      return await feedPageOnce(client, after, limit, signal);
    } catch (error) {
      if (!(error instanceof RateLimited) || waits >= RATE_LIMITED_WAITS) throw error;
      await delay(error.retryAfterMs ?? 1000, undefined, { signal });
    }
  }
}

class RateLimited extends FeedUnavailable {}

async function feedPageOnce(client: EventCallbacks, after: string | undefined, limit: number, signal?: AbortSignal): Promise<FeedAnswer> {
  const result = await client.listEvents({ query: { after, limit }, signal });
  if (result.response === undefined) {
    if (signal?.aborted) throw signal.reason;
    const cause = (result.error as unknown as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    const why = cause?.code ?? cause?.message;
    throw new FeedUnavailable(`the service at ${client.baseUrl} does not answer${why ? ` (${why})` : ''}`);
  }
  if (result.data) return result.data;
  const status = result.response.status;
  const body = result.error as { code?: number; exception?: { message?: string } } | undefined;
  const said = `${status}${body?.code ? `, code ${body.code}` : ''}${body?.exception?.message ? `: ${body.exception.message}` : ''}`;
  if (status === 401) throw new CredentialsRefused(`the service refused the credentials (${said})`);
  if (status === 429 || status >= 500) {
    const retryAfter = Number(result.response.headers.get('retry-after'));
    const waitMs = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined;
    throw status === 429 ? new RateLimited(`the feed answered ${said}`, waitMs) : new FeedUnavailable(`the feed answered ${said}`, waitMs);
  }
  throw new CommandFailed(`the feed answered ${said}`);
}

/** Pages from `after` to the feed's end; answers the end's cursor (nothing is forwarded). */
export async function feedEnd(client: EventCallbacks, limit: number, signal?: AbortSignal): Promise<string> {
  let after: string | undefined;
  for (;;) {
    const page = await feedPage(client, after, limit, signal);
    if (page.items.length === 0 || page.next_cursor === after) return page.next_cursor;
    after = page.next_cursor;
  }
}

/**
 * Finds an event in the feed, oldest first: the page it is on (the cursor it was read after) and the
 * event. Undefined when the feed does not have it.
 */
export async function findEvent(
  client: EventCallbacks,
  eventId: string,
  limit: number,
  signal?: AbortSignal,
): Promise<{ after: string | undefined; item: FeedItem } | undefined> {
  let after: string | undefined;
  for (;;) {
    const page = await feedPage(client, after, limit, signal);
    const item = page.items.find((candidate) => candidate.event_id === eventId);
    if (item) return { after, item };
    if (page.items.length === 0 || page.next_cursor === after) return undefined;
    after = page.next_cursor;
  }
}
