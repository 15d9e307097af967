import { waitFor } from '@app/testing';
import type { AppProcess } from './app-process';
import type { DrillContext } from './drill';
import type { DrillStack, StatusCounts } from './drill-stack';
import { type FinalExpectation, tallyEvents } from './event-audit';
import type { EventLoad } from './event-load';

/** Steps several drills share. A wait that runs out records a problem instead of throwing, so the drill still counts what it has. */

export async function waitOrRecord(context: DrillContext, description: string, probe: () => boolean, timeoutMs: number): Promise<boolean> {
  try {
    await waitFor(description, probe, { timeoutMs, intervalMs: 50 });
    return true;
  } catch (error) {
    context.problem(error instanceof Error ? error.message : String(error));
    return false;
  }
}

export async function waitForStatusesOrRecord(
  context: DrillContext,
  stack: DrillStack,
  description: string,
  done: (counts: StatusCounts) => boolean,
  timeoutMs: number,
): Promise<boolean> {
  try {
    await stack.waitForStatuses(description, done, timeoutMs);
    return true;
  } catch (error) {
    context.problem(error instanceof Error ? error.message : String(error));
    return false;
  }
}

/** Every event in a final status the drill can end with (delivered, or failed when the drill allows it). */
export function allFinal(load: EventLoad, allowFailed = false) {
  return (counts: StatusCounts): boolean => (counts.delivered ?? 0) + (allowFailed ? (counts.failed ?? 0) : 0) >= load.accepted.size;
}

/**
 * The end of an event drill: waits until every accepted event is final (bounded), then counts
 * accepted/delivered/failed/lost/duplicated, and checks what every drill promises besides: valid
 * signatures, no valid event rejected, no app that died unasked.
 */
export async function finishEventDrill(
  context: DrillContext,
  stack: DrillStack,
  load: EventLoad,
  { timeoutMs, expectation = {}, killed = [] }: { timeoutMs: number; expectation?: FinalExpectation; killed?: AppProcess[] },
): Promise<void> {
  await waitForStatusesOrRecord(
    context,
    stack,
    'every accepted event to reach a final status',
    allFinal(load, expectation.failedAfterAttempts !== undefined),
    timeoutMs,
  );
  const tally = await tallyEvents(stack, load.accepted, expectation);
  context.report(tally);
  context.note(`ingest answers: ${load.describeAnswers()}; receiver calls ${stack.receiver.calls}`);
  if (tally.unacceptedDeliveries > 0) context.note(`${tally.unacceptedDeliveries} deliveries of events ingest had not answered 202 for`);
  if (stack.receiver.badSignatures > 0) context.problem(`${stack.receiver.badSignatures} calls carried no valid webhook-signature`);
  if (load.rejected > 0) context.problem(`ingest rejected ${load.rejected} valid events`);
  for (const app of stack.unexpectedExits(killed)) {
    context.problem(`${app.label} exited unasked (${String((await app.exited).how)}):\n${app.tail()}`);
  }
}

/** Fails the drill unless ingest accepted every event the load sent (drills without an ingest outage). */
export function expectAllAccepted(context: DrillContext, load: EventLoad): void {
  if (load.accepted.size !== load.sent) {
    context.problem(`ingest accepted ${load.accepted.size} of ${load.sent} events (answers: ${load.describeAnswers()})`);
  }
}
