import { DeliveryQueues, deliveryJobId, firstDeliveryStep } from '@app/runtime';
import { DataSource } from 'typeorm';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { SubjectOrder } from '../../apps/delivery-worker/src/delivery/ordering/subject-order';
import { subjectReleases } from '../../apps/delivery-worker/src/delivery/delivery.metrics';
import { DeliveryLoader, type PendingDelivery } from '../../apps/delivery-worker/src/delivery/loading/delivery-loader';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { type RunningApp, startApp } from '../support/apps';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { waitFor } from '@app/testing';
import { storeEventsFor } from '../support/deliveries';
import { announceSettingsChange, insertEvents, type NewTestEvent, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('subject-order');

/** Releases that let a job waiting here go with no question to the rows (its event ahead was the only one pending before it). */
async function releasesWithoutQuestion(): Promise<number> {
  const metric = await subjectReleases.get();
  return metric.values.find((value) => value.labels.outcome === 'waiting_alone')?.value ?? 0;
}

const RECHECK_MS = 7_000;

/** SubjectOrder's key of a delivery: its event and its destination (each destination orders its own deliveries). */
function keyOf(delivery: Pick<PendingDelivery, 'seq' | 'destinationId'>): string {
  return `${delivery.seq}/${delivery.destinationId}`;
}

/** The delivery ahead of which `delivery`'s job waits in this worker (SubjectOrder's own record), if it waits here. */
function waitingBehind(order: SubjectOrder, delivery: PendingDelivery): string | undefined {
  return (order as unknown as { waitingHere: Map<string, { ahead: string }> }).waitingHere.get(keyOf(delivery))?.ahead;
}

/** Until `delivery`'s job waits here for `ahead`: its question answered, not a fixed time. */
function waitsHere(order: SubjectOrder, delivery: PendingDelivery, ahead: PendingDelivery): Promise<true> {
  return waitFor(`delivery ${keyOf(delivery)} waiting here for ${keyOf(ahead)}`, () => waitingBehind(order, delivery) === keyOf(ahead));
}

/**
 * SubjectOrder answers many jobs' questions with one statement (a batch of asks): each job must still
 * get the answer for its own subject, whatever the others in its batch are about. The deliveries here
 * are the primary's, of accounts whose primary orders by subject: ingest's statement gives each an open
 * row carrying its subject, which is where the questions look for the deliveries still open ahead.
 */
describe('SubjectOrder, many jobs asking at once', () => {
  let configApi: RunningApp;
  let worker: RunningApp;

  beforeAll(async () => {
    configApi = await startApp(ConfigApiModule);
    // The deliveries here are stored with no job: this worker's reconciler must leave them alone.
    worker = await startApp(DeliveryWorkerModule, { ORDERING_RECHECK: `${RECHECK_MS}ms`, RECONCILE_INTERVAL: '1h' });
  });

  afterAll(async () => {
    await worker?.close();
    await configApi?.close();
  });

  /** An account whose primary orders by subject; its target refuses connections (no job here is meant to reach it). */
  async function orderedAccount(): Promise<number> {
    const account = await createAccount(configApi);
    await setCallbackSettings(worker.app, account.id, { pushUrl: 'http://127.0.0.1:9/ordered', contentType: 'JSON', permissions: 'all' });
    await worker.app.get(DataSource).query(`UPDATE destinations SET ordering = 'subject', version = version + 1 WHERE account_id = $1 AND id = 'primary'`, [account.id]);
    await announceSettingsChange(worker.app, account.id);
    return account.id;
  }

  /** Stores the events as ingest does and loads their primary deliveries as a job would, in accepted order. */
  async function pending(accountId: number, events: NewTestEvent[]): Promise<PendingDelivery[]> {
    const stored = await insertEvents(worker.app, accountId, events);
    // Due tomorrow: no reconciler of the shared database takes these open rows while the test asks about them.
    await worker.app.get(DataSource).query(`UPDATE open_deliveries SET due_at = now() + interval '1 day' WHERE event_seq = ANY($1::bigint[])`, [
      stored.map((event) => event.seq),
    ]);
    const loader = worker.app.get(DeliveryLoader);
    const loaded = await Promise.all(stored.map((event) => loader.load(event.seq)));
    return loaded.map((delivery) => {
      if (!delivery) throw new Error('a stored delivery did not load');
      return delivery;
    });
  }

  /** The delivery ends as the recorder ends it: its final status, its open row removed. */
  async function end(delivery: PendingDelivery, status = 'delivered'): Promise<void> {
    await worker.app.get(DataSource).query(
      `WITH closed AS (DELETE FROM open_deliveries WHERE event_seq = $1 AND destination_id = $2)
       UPDATE deliveries SET status = $3, next_attempt_at = NULL WHERE event_seq = $1 AND destination_id = $2`,
      [delivery.seq, delivery.destinationId, status],
    );
  }

  it('holds each event only behind an earlier pending event of its own subject', async () => {
    const account = await orderedAccount();
    const other = await orderedAccount();
    // Three customers interleaved, four events each, then one without a subject (no id).
    const interleaved: NewTestEvent[] = [];
    for (let round = 0; round < 4; round += 1) for (const id of [101, 102, 103]) interleaved.push({ action: 'Customer_update', message: { id, round } });
    const events = await pending(account, [...interleaved, { action: 'Customer_update', message: { round: 9 } }]);
    // The same subject in another account holds nothing here.
    await pending(other, [{ action: 'Customer_update', message: { id: 104 } }]);
    const [lateOfOther] = await pending(account, [{ action: 'Customer_update', message: { id: 104 } }]);

    const order = worker.app.get(SubjectOrder);
    const holds = await Promise.all([...events, lateOfOther].map((event) => order.holdMs(event)));
    expect(holds).toEqual([null, null, null, ...Array.from({ length: 9 }, () => RECHECK_MS), null, null]);

    // Customer 102's first event ends: its second goes, the others keep their answers.
    await end(events[1]);
    const after = await Promise.all(events.slice(3, 6).map((event) => order.holdMs(event)));
    expect(after).toEqual([RECHECK_MS, null, RECHECK_MS]);
  });

  it("loads an ordered delivery with its subject from its open row, and holdMs asks the rows afresh each time", async () => {
    const account = await orderedAccount();
    const loads = await pending(account, [
      { action: 'Customer_update', message: { id: 201, round: 1 } },
      { action: 'Customer_update', message: { id: 202, round: 1 } },
      { action: 'Customer_update', message: { id: 201, round: 2 } },
      { action: 'Customer_update', message: { id: 201, round: 3 } },
      { action: 'Customer_update', message: { round: 9 } },
    ]);
    // Each delivery is the primary's, with the subject its open row carries; the event without one has no open row.
    expect(loads.map((load) => [load.destinationId, load.open, load.subject])).toEqual([
      ['primary', true, 'customer:201'],
      ['primary', true, 'customer:202'],
      ['primary', true, 'customer:201'],
      ['primary', true, 'customer:201'],
      ['primary', false, null],
    ]);
    const order = worker.app.get(SubjectOrder);
    expect(await Promise.all(loads.map((load) => order.holdMs(load)))).toEqual([null, null, RECHECK_MS, RECHECK_MS, null]);

    // The first ends after the loads: a new ask sees the end (the third goes), and the fourth still waits for the third.
    await end(loads[0]);
    expect(await order.holdMs(loads[2])).toBeNull();
    expect(await order.holdMs(loads[3])).toBe(RECHECK_MS);
  });

  it("orders each destination's deliveries of a subject apart: one event's end at one destination lets only that destination's next go", async () => {
    const account = await orderedAccount();
    const destinationId = `dst_order${process.pid.toString(36)}${Date.now().toString(36)}`;
    await worker.app.get(DataSource).query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, signing_secret, ordering) VALUES ($1, $2, 'webhook', 'http://127.0.0.1:9/d', 'http://127.0.0.1:9/d', 'sealed', 'subject')`,
      [destinationId, account],
    );
    const stored = await storeEventsFor(worker.app, account, [1, 2].map((round) => ({ action: 'Customer_update', message: { id: 301, round } })), [destinationId]);
    await worker.app.get(DataSource).query(`UPDATE open_deliveries SET due_at = now() + interval '1 day' WHERE event_seq = ANY($1::bigint[])`, [
      stored.map((event) => event.seq),
    ]);
    const loader = worker.app.get(DeliveryLoader);
    const load = async (seq: string, destination: string): Promise<PendingDelivery> => {
      const delivery = await loader.load(seq, destination);
      if (!delivery) throw new Error(`the delivery of ${seq} to ${destination} did not load`);
      return delivery;
    };
    const [primaryFirst, primarySecond] = await Promise.all(stored.map((event) => load(event.seq, 'primary')));
    const [otherFirst, otherSecond] = await Promise.all(stored.map((event) => load(event.seq, destinationId)));
    const order = worker.app.get(SubjectOrder);
    expect(await Promise.all([primarySecond, otherSecond].map((delivery) => order.holdMs(delivery)))).toEqual([RECHECK_MS, RECHECK_MS]);

    await end(otherFirst);
    expect(await Promise.all([primarySecond, otherSecond].map((delivery) => order.holdMs(delivery)))).toEqual([RECHECK_MS, null]);
    await end(primaryFirst);
    expect(await order.holdMs(primarySecond)).toBeNull();
  });

  it('holds an event behind a retrying one until that retry is due, plus the re-check', async () => {
    const account = await orderedAccount();
    const [first, second] = await pending(account, [
      { action: 'Organization_update', message: { id: 7 } },
      { action: 'Organization_update', message: { id: 7 } },
    ]);
    const dueInMs = 60_000;
    // Its first attempt failed and its retry is due in a minute (the recorder keeps its open row, with its subject).
    await worker.app.get(DataSource).query(
      `UPDATE deliveries SET status = 'retrying', attempts = 1, series_attempts = 1, next_attempt_at = now() + $2 * interval '1 millisecond'
        WHERE event_seq = $1 AND destination_id = 'primary'`,
      [first.seq, dueInMs],
    );
    const hold = await worker.app.get(SubjectOrder).holdMs(second);
    expect(hold).toBeGreaterThan(dueInMs + RECHECK_MS - 5_000);
    expect(hold).toBeLessThanOrEqual(dueInMs + RECHECK_MS);
  });

  /** Two pending events of one customer of a new account, in accepted order. */
  async function twoOfOneSubject(customerId: number): Promise<PendingDelivery[]> {
    const account = await orderedAccount();
    return pending(account, [
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
    await end(first);
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
    const account = await orderedAccount();
    const [first, , last] = await pending(account, [1, 2, 3].map((round) => ({ action: 'Customer_update', message: { id: 58, round } })));
    const order = worker.app.get(SubjectOrder);
    const over = order.startWorking(first);
    const asked = order.holdMs(last);
    await waitsHere(order, last, first);
    await end(first);
    await order.release(first);
    over();
    // The one between is still pending, and not worked on here: the last one is held behind it.
    await expect(asked).resolves.toBe(RECHECK_MS);
  });

  it('keeps the waiting job waiting when an event between it and the one it waits for ends first', async () => {
    const account = await orderedAccount();
    const [first, between, last] = await pending(account, [1, 2, 3].map((round) => ({ action: 'Customer_update', message: { id: 57, round } })));
    const order = worker.app.get(SubjectOrder);
    const over = order.startWorking(first);
    let answer: number | null | undefined;
    const asked = order.holdMs(last).then((hold) => (answer = hold));
    await waitsHere(order, last, first);
    // The middle event ends without a call (filtered, say) while the first is still being worked on:
    // its release names the last one as its next, which must still wait for the first.
    await end(between, 'filtered');
    await order.release(between);
    // A wrong let-go would have run within the release; what it set off is done once callbacks due have run.
    await new Promise((resolve) => setImmediate(resolve));
    expect(answer).toBeUndefined();
    expect(waitingBehind(order, last)).toBe(keyOf(first));
    await end(first);
    await order.release(first);
    over();
    await asked;
    expect(answer).toBeNull();
  });

  /** The delivery's first job, held: in the delayed set for a minute, as DeliveryPipeline.postpone leaves it. */
  async function heldJob(event: PendingDelivery): Promise<{ id: string; state: () => Promise<string> }> {
    const step = firstDeliveryStep(event.seq, event.accountId, event.destinationId);
    await worker.app.get(DeliveryQueues).addBulk([step], 60_000);
    const id = deliveryJobId(step);
    const queue = worker.app.get(DeliveryQueues).queueFor(event.accountId);
    return { id, state: () => queue.getJobState(id) };
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
