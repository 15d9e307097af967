import { ConfigApiModule } from '../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../apps/delivery-worker/src/delivery-worker.module';
import { DataSource } from 'typeorm';
import { DestinationOutcomeStore } from '../apps/delivery-worker/src/delivery/destination-delivery/destination-outcome-store';
import { type AttemptRow, type Outcome, OutcomeStore } from '../apps/delivery-worker/src/delivery/outcome/outcome-store';
import { type RunningApp, startApp } from './support/apps';
import { createAccount } from './support/fixtures';
import { attemptRows, customerEvents, eventRow, insertEvents, type StoredTestEvent, useOwnRedisPrefix } from './support/worker-process';

useOwnRedisPrefix('outcome-record-once');

/**
 * Two writers of one delivery step: a job whose lock lapsed on a starved machine is re-run by BullMQ
 * while its first run still calls, or the same step's job is added twice. Both runs load the row at the
 * same step and both make their call; only the first record may count, the attempt row included, or
 * the event's history shows the same attempt number twice (CONTRACT §4: one row per attempt).
 */
describe('the outcome record refuses a second writer of the same step', () => {
  let configApi: RunningApp;
  let worker: RunningApp;
  let store: OutcomeStore;

  beforeAll(async () => {
    // The events here are written straight to PostgreSQL with no job: the reconciler must not pick them up.
    [configApi, worker] = await Promise.all([startApp(ConfigApiModule), startApp(DeliveryWorkerModule, { RECONCILE_INTERVAL: '1h' })]);
    store = worker.app.get(OutcomeStore, { strict: false });
  });

  afterAll(async () => {
    await Promise.all([worker?.close(), configApi?.close()]);
  });

  /** The first step's outcome of `event`: its first attempt failed (503), the next is due in 10 s. */
  function firstStepFailed(event: StoredTestEvent, run: string): Outcome {
    const attempt: AttemptRow = {
      eventSeq: event.seq,
      series: 0,
      attempt: 1,
      startedAt: new Date(),
      durationMs: 5,
      url: 'http://127.0.0.1:9/hook',
      requestHeaders: { 'webhook-id': event.eventId },
      requestBody: '{}',
      responseStatus: 503,
      responseHeaders: {},
      responseBody: run,
      error: 'HTTP 503: server error',
    };
    return {
      attempt,
      change: {
        seq: event.seq,
        series: 0,
        seriesAttempts: 0,
        status: 'retrying',
        attempted: 1,
        nextAttemptAt: new Date(Date.now() + 10_000),
        deliveredAt: null,
        lastError: `HTTP 503: server error; retry in 10 s (${run})`,
      },
    };
  }

  it('keeps the first of two records written one after the other', async () => {
    const [event] = await insertEvents(worker.app, (await createAccount(configApi)).id, customerEvents(1));
    expect(await store.record(firstStepFailed(event, 'first run'))).toBe(true);
    expect(await store.record(firstStepFailed(event, 'second run'))).toBe(false);

    const attempts = await attemptRows(worker.app, event.eventId);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.response_body])).toEqual([[1, 'first run']]);
    expect(await eventRow(worker.app, event.eventId)).toMatchObject({ status: 'retrying', attempts: 1, series_attempts: 1 });
  });

  it('keeps one of two records that arrive in the same batch', async () => {
    const [event, other] = await insertEvents(worker.app, (await createAccount(configApi)).id, customerEvents(2));
    // The first outcome occupies the writer, so the two that follow go out together in the next batch.
    const [, first, second] = await Promise.all([
      store.record(firstStepFailed(other, 'other event')),
      store.record(firstStepFailed(event, 'first run')),
      store.record(firstStepFailed(event, 'second run')),
    ]);
    expect([first, second]).toEqual([true, false]);

    const attempts = await attemptRows(worker.app, event.eventId);
    expect(attempts.map((attempt) => [attempt.attempt, attempt.response_body])).toEqual([[1, 'first run']]);
    expect(await eventRow(worker.app, event.eventId)).toMatchObject({ attempts: 1, series_attempts: 1 });
    expect((await attemptRows(worker.app, other.eventId)).map((attempt) => attempt.attempt)).toEqual([1]);
  });

  it('does the same for a delivery to another destination, alone and in a batch', async () => {
    const account = await createAccount(configApi);
    const [event, other] = await insertEvents(worker.app, account.id, customerEvents(2));
    const dataSource = worker.app.get(DataSource);
    const destinationId = `dst_recordonce${Date.now().toString(36)}`;
    await dataSource.query(
      `INSERT INTO destinations (id, account_id, type, target, target_shown, signing_secret) VALUES ($1, $2, 'webhook', 'sealed', 'http://127.0.0.1:9/d', 'sealed')`,
      [destinationId, account.id],
    );
    await dataSource.query(
      `INSERT INTO destination_deliveries (event_seq, destination_id, account_id, status, next_attempt_at) SELECT unnest($1::bigint[]), $2, $3, 'queued', now()`,
      [[event.seq, other.seq], destinationId, account.id],
    );
    const destinations = worker.app.get(DestinationOutcomeStore, { strict: false });
    const toDestination = (of: StoredTestEvent, run: string) => ({ destinationId, ...firstStepFailed(of, run) });
    expect(await destinations.record(toDestination(event, 'first run'))).toBe(true);
    const [, first, second] = await Promise.all([
      destinations.record(toDestination(event, 'second run')),
      destinations.record(toDestination(other, 'first run')),
      destinations.record(toDestination(other, 'second run')),
    ]);
    expect([first, second]).toEqual([true, false]);

    const attempts = await dataSource.query<Array<{ event_seq: string; attempt: number; response_body: string }>>(
      `SELECT event_seq::text AS event_seq, attempt, response_body FROM delivery_attempts WHERE destination_id = $1 ORDER BY event_seq, id`,
      [destinationId],
    );
    expect(attempts).toEqual([
      { event_seq: event.seq, attempt: 1, response_body: 'first run' },
      { event_seq: other.seq, attempt: 1, response_body: 'first run' },
    ]);
    const rows = await dataSource.query(`SELECT status, attempts, series_attempts FROM destination_deliveries WHERE destination_id = $1`, [destinationId]);
    expect(rows).toEqual([
      { status: 'retrying', attempts: 1, series_attempts: 1 },
      { status: 'retrying', attempts: 1, series_attempts: 1 },
    ]);
    // The primary's rows were never touched.
    expect(await eventRow(worker.app, event.eventId)).toMatchObject({ status: 'queued', attempts: 0 });
    // The stats series count deliveries to every destination: two failed attempts, once each.
    const [rollup] = await dataSource.query<Array<{ attempts: string; failed_attempts: string; delivered: string }>>(
      `SELECT sum(attempts)::text AS attempts, sum(failed_attempts)::text AS failed_attempts, sum(delivered)::text AS delivered
         FROM delivery_rollups WHERE granularity = 'minute' AND account_id = $1`,
      [account.id],
    );
    expect(rollup).toEqual({ attempts: '2', failed_attempts: '2', delivered: '0' });
  });
});
