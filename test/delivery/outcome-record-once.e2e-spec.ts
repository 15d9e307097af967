import { DataSource } from 'typeorm';
import { type AttemptToRecord, ROLLED_UP_BUCKETS, Sql, type StepOutcome } from '@app/persistence/testing';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { OutcomeStore } from '../../apps/delivery-worker/src/delivery/outcome/outcome-store';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { useApps } from '../support/apps';
import { deliveryRowsOf, storeEventsFor } from '../support/deliveries';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { customerEvents, type StoredTestEvent, useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('outcome-record-once');

/**
 * Two writers of one delivery step: a job whose lock lapsed on a starved machine is re-run by BullMQ
 * while its first run still calls, or the same step's job is added twice. Both runs load the row at the
 * same step and both make their call; only the first record may count, the attempt row included, or
 * the delivery's history shows the same attempt number twice (CONTRACT §4: one row per attempt). One
 * store and one statement (RECORD_OUTCOMES) for every destination, the primary included.
 */
describe('the outcome record refuses a second writer of the same step', () => {
  // The events here are stored with no job: the reconciler must not pick them up.
  const { configApi, worker } = useApps({ configApi: ConfigApiModule, worker: [DeliveryWorkerModule, { RECONCILE_INTERVAL: '1h' }] });
  let store: OutcomeStore;
  let dataSource: DataSource;
  let destinationCounter = 0;

  beforeAll(() => {
    store = worker.app.get(OutcomeStore, { strict: false });
    dataSource = worker.app.get(DataSource);
  });

  /** An account whose primary takes its events (queued, never called: no job) and one more destination, as the worker would find them. */
  async function accountWithDestination(): Promise<{ accountId: number; destinationId: string }> {
    const accountId = (await createAccount(configApi)).id;
    await setCallbackSettings(worker.app, accountId, { pushUrl: 'http://127.0.0.1:9/primary', contentType: 'JSON', permissions: 'all' });
    destinationCounter += 1;
    const destinationId = `dst_recordonce${process.pid.toString(36)}${destinationCounter}`;
    await dataSource.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, signing_secret) VALUES ($1, $2, 'webhook', 'http://127.0.0.1:9/d', 'http://127.0.0.1:9/d', 'sealed')`,
      [destinationId, accountId],
    );
    return { accountId, destinationId };
  }

  async function acceptedAt(event: StoredTestEvent): Promise<Date> {
    const [row] = await dataSource.query<{ created_at: Date }[]>(`SELECT created_at FROM events WHERE seq = $1`, [event.seq]);
    return row.created_at;
  }

  /** The first step's outcome of `event` to a destination: its first attempt failed (503), the next is due in 10 s. */
  async function firstStepFailed(event: StoredTestEvent, destinationId: string, run: string): Promise<StepOutcome> {
    const attempt: AttemptToRecord = {
      attempt: 1,
      startedAt: new Date(),
      durationMs: 5,
      url: 'http://127.0.0.1:9/hook',
      requestHeaders: { 'webhook-id': event.eventId },
      encoding: 'json',
      responseStatus: 503,
      responseHeaders: {},
      responseBody: run,
      error: 'HTTP 503: server error',
    };
    const nextAttemptAt = new Date(Date.now() + 10_000);
    return {
      seq: event.seq,
      destinationId,
      accountId: event.accountId,
      series: 0,
      seriesAttempts: 0,
      createdAt: await acceptedAt(event),
      status: 'retrying',
      nextAttemptAt,
      deliveredAt: null,
      lastError: `HTTP 503: server error; retry in 10 s (${run})`,
      attempt,
      // A retry's delivery waits with an open row due at its next attempt (the reconciler's safety net).
      open: { kind: 'keep', dueAt: nextAttemptAt, held: null, subject: null, expiresAt: null },
    };
  }

  async function attemptsOf(event: StoredTestEvent, destinationId: string): Promise<[number, string][]> {
    const rows = await dataSource.query<{ attempt: number; response_body: string }[]>(
      `SELECT attempt, response_body FROM delivery_attempts WHERE event_seq = $1 AND destination_id = $2 ORDER BY attempt, id`,
      [event.seq, destinationId],
    );
    return rows.map((row) => [row.attempt, row.response_body]);
  }

  async function openRowOf(event: StoredTestEvent, destinationId: string): Promise<{ due_at: Date } | undefined> {
    const [row] = await dataSource.query<{ due_at: Date }[]>(`SELECT due_at FROM open_deliveries WHERE event_seq = $1 AND destination_id = $2`, [event.seq, destinationId]);
    return row;
  }

  describe.each(['the primary', 'another destination'])('for %s', (which) => {
    async function setUp(count: number): Promise<{ events: StoredTestEvent[]; destinationId: string; other: string }> {
      const { accountId, destinationId } = await accountWithDestination();
      const events = await storeEventsFor(worker.app, accountId, customerEvents(count), [destinationId]);
      for (const event of events) expect(event.queued.sort()).toEqual([destinationId, 'primary'].sort());
      return which === 'the primary' ? { events, destinationId: 'primary', other: destinationId } : { events, destinationId, other: 'primary' };
    }

    it('keeps the first of two records written one after the other', async () => {
      const { events: [event], destinationId, other } = await setUp(1);
      const first = await firstStepFailed(event, destinationId, 'first run');
      expect(await store.record(first)).toBe(true);
      expect(await store.record(await firstStepFailed(event, destinationId, 'second run'))).toBe(false);

      expect(await attemptsOf(event, destinationId)).toEqual([[1, 'first run']]);
      expect(await deliveryRowsOf(worker.app, [event.seq], destinationId)).toMatchObject([
        { status: 'retrying', attempts: 1, series_attempts: 1, last_error: 'HTTP 503: server error; retry in 10 s (first run)' },
      ]);
      // The open row is the first record's: the second changed nothing at all.
      expect((await openRowOf(event, destinationId))?.due_at).toEqual(first.nextAttemptAt);
      // The event's delivery to the other destination was never touched.
      expect(await deliveryRowsOf(worker.app, [event.seq], other)).toMatchObject([{ status: 'queued', attempts: 0, series_attempts: 0 }]);
      expect(await attemptsOf(event, other)).toEqual([]);
    });

    it('keeps one of two records that arrive in the same batch', async () => {
      const { events: [event, otherEvent], destinationId } = await setUp(2);
      const outcomes = [
        await firstStepFailed(otherEvent, destinationId, 'other event'),
        await firstStepFailed(event, destinationId, 'first run'),
        await firstStepFailed(event, destinationId, 'second run'),
      ];
      // The first outcome occupies the writer, so the two that follow go out together in the next batch.
      const [, first, second] = await Promise.all(outcomes.map((outcome) => store.record(outcome)));
      expect([first, second]).toEqual([true, false]);

      expect(await attemptsOf(event, destinationId)).toEqual([[1, 'first run']]);
      expect(await deliveryRowsOf(worker.app, [event.seq], destinationId)).toMatchObject([{ status: 'retrying', attempts: 1, series_attempts: 1 }]);
      expect(await attemptsOf(otherEvent, destinationId)).toEqual([[1, 'other event']]);
    });
  });

  it('counts each recorded attempt once in the stats series, whichever destination it went to', async () => {
    const { accountId, destinationId } = await accountWithDestination();
    const since = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const [event] = await storeEventsFor(worker.app, accountId, customerEvents(1), [destinationId]);
    const outcomes = [
      await firstStepFailed(event, 'primary', 'first run'),
      await firstStepFailed(event, 'primary', 'second run'),
      await firstStepFailed(event, destinationId, 'first run'),
      await firstStepFailed(event, destinationId, 'second run'),
    ];
    expect(await Promise.all(outcomes.map((outcome) => store.record(outcome)))).toEqual([true, false, true, false]);

    // The series read the rollups with the book entries not folded yet: exact whenever they are read.
    const buckets = await worker.app
      .get(Sql)
      .rows(ROLLED_UP_BUCKETS, { granularity: 'minute', accountId, since, until: new Date(Date.now() + 60_000) });
    const sum = (pick: (row: (typeof buckets)[number]) => number) => buckets.reduce((total, row) => total + Number(pick(row)), 0);
    // CONTRACT (docs/destinations.md, Stats): the series count deliveries to every destination, so two failed attempts.
    expect({ attempts: sum((row) => row.attempts), failed_attempts: sum((row) => row.failed_attempts), delivered: sum((row) => row.delivered) }).toEqual({
      attempts: 2,
      failed_attempts: 2,
      delivered: 0,
    });
  });

  it('writes outcomes that arrive a few milliseconds apart, each applied once with its own attempt', async () => {
    const { accountId, destinationId } = await accountWithDestination();
    const events = await storeEventsFor(worker.app, accountId, customerEvents(12), [destinationId]);
    const recorded: Promise<boolean>[] = [];
    for (const [index, event] of events.entries()) {
      recorded.push(store.record(await firstStepFailed(event, destinationId, `run ${index}`)));
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(await Promise.all(recorded)).toEqual(events.map(() => true));
    for (const [index, event] of events.entries()) expect(await attemptsOf(event, destinationId)).toEqual([[1, `run ${index}`]]);
  });
});
