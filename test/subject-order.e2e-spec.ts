import { DeliveryQueues, deliveryJobId, firstDeliveryStep } from '@app/runtime';
import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { SubjectOrder } from '../apps/delivery-worker/src/delivery/ordering/subject-order';
import { subjectReleases } from '../apps/delivery-worker/src/delivery/delivery.metrics';
import { EventLoader, type PendingEvent } from '../apps/delivery-worker/src/delivery/loading/event-loader';
import { DeliveryWorkerModule } from '../apps/delivery-worker/src/delivery-worker.module';
import { type RunningApp, startApp } from './support/apps';
import { createAccount } from './support/fixtures';
import { waitFor } from './support/wait-for';
import { insertEvents, type NewTestEvent, useOwnRedisPrefix } from './support/worker-process';

useOwnRedisPrefix('subject-order');

/** Releases that let a job waiting here go with no question to the rows (its event ahead was the only one pending before it). */
async function releasesWithoutQuestion(): Promise<number> {
  const metric = await subjectReleases.get();
  return metric.values.find((value) => value.labels.outcome === 'waiting_alone')?.value ?? 0;
}

const RECHECK_MS = 7_000;

/** The event ahead of which `event`'s job waits in this worker (SubjectOrder's own record), if it waits here. */
function waitingBehind(order: SubjectOrder, event: PendingEvent): string | undefined {
  return (order as unknown as { waitingHere: Map<string, { ahead: string }> }).waitingHere.get(event.seq)?.ahead;
}

/** Until `event`'s job waits here for `ahead`: its question answered, not a fixed time. */
function waitsHere(order: SubjectOrder, event: PendingEvent, ahead: PendingEvent): Promise<true> {
  return waitFor(`event ${event.seq} waiting here for ${ahead.seq}`, () => waitingBehind(order, event) === ahead.seq);
}

/**
 * SubjectOrder answers many jobs' questions with one statement (a batch of asks): each job must still
 * get the answer for its own subject, whatever the others in its batch are about.
 */
describe('SubjectOrder, many jobs asking at once', () => {
  let configApi: RunningApp;
  let worker: RunningApp;

  beforeAll(async () => {
    configApi = await startApp(ConfigApiModule);
    worker = await startApp(DeliveryWorkerModule, { ORDERING_RECHECK: `${RECHECK_MS}ms` });
  });

  afterAll(async () => {
    await worker?.close();
    await configApi?.close();
  });

  async function pending(accountId: number, events: NewTestEvent[]): Promise<PendingEvent[]> {
    const stored = await insertEvents(configApi.app, accountId, events);
    const store = worker.app.get(EventLoader);
    const loaded = await Promise.all(stored.map((event) => store.loadEvent(event.seq)));
    return loaded.map((event) => {
      if (!event) throw new Error('a stored event did not load');
      return event;
    });
  }

  it('holds each event only behind an earlier pending event of its own subject', async () => {
    const account = await createAccount(configApi);
    const other = await createAccount(configApi);
    // Three customers interleaved, four events each, then one without a subject (no id).
    const interleaved: NewTestEvent[] = [];
    for (let round = 0; round < 4; round += 1) for (const id of [101, 102, 103]) interleaved.push({ action: 'Customer_update', message: { id, round } });
    const events = await pending(account.id, [...interleaved, { action: 'Customer_update', message: { round: 9 } }]);
    // The same subject in another account holds nothing here.
    await pending(other.id, [{ action: 'Customer_update', message: { id: 104 } }]);
    const [lateOfOther] = await pending(account.id, [{ action: 'Customer_update', message: { id: 104 } }]);

    const order = worker.app.get(SubjectOrder);
    const holds = await Promise.all([...events, lateOfOther].map((event) => order.holdMs(event)));
    expect(holds).toEqual([null, null, null, ...Array.from({ length: 9 }, () => RECHECK_MS), null, null]);

    // Customer 102's first event ends: its second goes, the others keep their answers.
    await worker.app.get(DataSource).query(`UPDATE events SET status = 'delivered' WHERE seq = $1`, [events[1].seq]);
    const after = await Promise.all(events.slice(3, 6).map((event) => order.holdMs(event)));
    expect(after).toEqual([RECHECK_MS, null, RECHECK_MS]);
  });

  it("loads an ordered job's event with the earliest pending event of its subject ahead, which holdMs takes as its first answer", async () => {
    const account = await createAccount(configApi);
    const stored = await insertEvents(configApi.app, account.id, [
      { action: 'Customer_update', message: { id: 201, round: 1 } },
      { action: 'Customer_update', message: { id: 202, round: 1 } },
      { action: 'Customer_update', message: { id: 201, round: 2 } },
      { action: 'Customer_update', message: { id: 201, round: 3 } },
      { action: 'Customer_update', message: { round: 9 } },
    ]);
    const store = worker.app.get(EventLoader);
    const loads = await Promise.all(stored.map((event) => store.loadOrderedEvent(event.seq)));
    expect(loads.map((load) => load?.event.seq)).toEqual(stored.map((event) => event.seq));
    expect(loads.map((load) => load?.ahead?.seq)).toEqual([undefined, undefined, stored[0].seq, stored[0].seq, undefined]);
    // Customer 201's second event has only the first pending ahead of it; its third has the first two.
    expect(loads.map((load) => load?.ahead?.alone)).toEqual([undefined, undefined, true, false, undefined]);

    // The first event ends after the load: holdMs goes by the load's answer, and only a fresh ask sees the end.
    await worker.app.get(DataSource).query(`UPDATE events SET status = 'delivered' WHERE seq = $1`, [stored[0].seq]);
    const third = loads[2];
    if (!third) throw new Error('the third event did not load');
    const order = worker.app.get(SubjectOrder);
    expect(await order.holdMs(third.event, third)).toBe(RECHECK_MS);
    expect(await order.holdMs(third.event)).toBeNull();
  });

  it('holds an event behind a retrying one until that retry is due, plus the re-check', async () => {
    const account = await createAccount(configApi);
    const [first, second] = await pending(account.id, [
      { action: 'Organization_update', message: { id: 7 } },
      { action: 'Organization_update', message: { id: 7 } },
    ]);
    const dueInMs = 60_000;
    await worker.app.get(DataSource).query(`UPDATE events SET status = 'retrying', next_attempt_at = now() + $2 * interval '1 millisecond' WHERE seq = $1`, [first.seq, dueInMs]);
    const hold = await worker.app.get(SubjectOrder).holdMs(second);
    expect(hold).toBeGreaterThan(dueInMs + RECHECK_MS - 5_000);
    expect(hold).toBeLessThanOrEqual(dueInMs + RECHECK_MS);
  });

  /** Two pending events of one customer of a new account, in accepted order. */
  async function twoOfOneSubject(customerId: number): Promise<PendingEvent[]> {
    const account = await createAccount(configApi);
    return pending(account.id, [
      { action: 'Customer_update', message: { id: customerId, round: 1 } },
      { action: 'Customer_update', message: { id: customerId, round: 2 } },
    ]);
  }

  it('lets a job wait in the worker for the end of the event ahead when this worker is working on it', async () => {
    const [first, second] = await twoOfOneSubject(55);
    const order = worker.app.get(SubjectOrder);
    const over = order.startWorking(first);
    let answer: number | null | undefined;
    const asked = order.holdMs(second).then((hold) => (answer = hold));
    // Asked, and waiting: the event ahead is still pending and this worker is on it.
    await waitsHere(order, second, first);
    expect(answer).toBeUndefined();
    await worker.app.get(DataSource).query(`UPDATE events SET status = 'delivered' WHERE seq = $1`, [first.seq]);
    over();
    await asked;
    expect(answer).toBeNull();
  });

  it('lets the waiting job go from the release of the event ahead, the only one pending ahead of it, without a question', async () => {
    const [first, second] = await twoOfOneSubject(56);
    const order = worker.app.get(SubjectOrder);
    const over = order.startWorking(first);
    const asked = order.holdMs(second);
    await waitsHere(order, second, first);
    const unasked = await releasesWithoutQuestion();
    // The release alone lets it go: the first row is left pending here, so asking again would hold it.
    await order.release(first);
    await expect(asked).resolves.toBeNull();
    expect(await releasesWithoutQuestion()).toBe(unasked + 1);
    over();
  });

  it('keeps the waiting job from going at the end of the event ahead while another one of the subject is pending between them', async () => {
    const account = await createAccount(configApi);
    const [first, , last] = await pending(account.id, [1, 2, 3].map((round) => ({ action: 'Customer_update', message: { id: 58, round } })));
    const order = worker.app.get(SubjectOrder);
    const over = order.startWorking(first);
    const asked = order.holdMs(last);
    await waitsHere(order, last, first);
    await worker.app.get(DataSource).query(`UPDATE events SET status = 'delivered' WHERE seq = $1`, [first.seq]);
    await order.release(first);
    over();
    // The one between is still pending, and not worked on here: the last one is held behind it.
    await expect(asked).resolves.toBe(RECHECK_MS);
  });

  it('keeps the waiting job waiting when an event between it and the one it waits for ends first', async () => {
    const account = await createAccount(configApi);
    const [first, between, last] = await pending(account.id, [1, 2, 3].map((round) => ({ action: 'Customer_update', message: { id: 57, round } })));
    const order = worker.app.get(SubjectOrder);
    const over = order.startWorking(first);
    let answer: number | null | undefined;
    const asked = order.holdMs(last).then((hold) => (answer = hold));
    await waitsHere(order, last, first);
    // The middle event ends without a call (filtered, say) while the first is still being worked on:
    // its release names the last one as its next, which must still wait for the first.
    await worker.app.get(DataSource).query(`UPDATE events SET status = 'filtered' WHERE seq = $1`, [between.seq]);
    await order.release(between);
    // A wrong let-go would have run within the release; what it set off is done once callbacks due have run.
    await new Promise((resolve) => setImmediate(resolve));
    expect(answer).toBeUndefined();
    expect(waitingBehind(order, last)).toBe(first.seq);
    await worker.app.get(DataSource).query(`UPDATE events SET status = 'delivered' WHERE seq = $1`, [first.seq]);
    await order.release(first);
    over();
    await asked;
    expect(answer).toBeNull();
  });

  /** The event's first job, held: in the delayed set for a minute, as DeliveryService.postpone leaves it. */
  async function heldJob(event: PendingEvent): Promise<{ id: string; state: () => Promise<string> }> {
    const step = firstDeliveryStep(event.seq, event.accountId);
    await worker.app.get(DeliveryQueues).addBulk([step], 60_000);
    const id = deliveryJobId(step);
    const queue = worker.app.get(DeliveryQueues).queueFor(event.accountId);
    return { id, state: () => queue.getJobState(id) };
  }

  async function end(event: PendingEvent): Promise<void> {
    await worker.app.get(DataSource).query(`UPDATE events SET status = 'delivered' WHERE seq = $1`, [event.seq]);
  }

  it('promotes a held job whether the release of the event ahead comes before it reaches the delayed set or after', async () => {
    const order = worker.app.get(SubjectOrder);

    // The release first: the next job is not held yet, so its mark waits for it.
    const [first, second] = await twoOfOneSubject(71);
    await end(first);
    await order.release(first);
    const early = await heldJob(second);
    expect(await early.state()).toBe('delayed');
    await order.afterHold(second.accountId, early.id, 60_000);
    expect(await early.state()).not.toBe('delayed');

    // The hold first: the job says it is held, and the release promotes it.
    const [ahead, behind] = await twoOfOneSubject(72);
    const late = await heldJob(behind);
    await order.afterHold(behind.accountId, late.id, 60_000);
    expect(await late.state()).toBe('delayed');
    await end(ahead);
    await order.release(ahead);
    expect(await late.state()).not.toBe('delayed');
  });
});
