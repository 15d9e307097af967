import { LATENCY_BOUNDS_MS } from '@app/persistence/testing';
import { adminCall, expectQueryError, type Json } from '../support/admin-client';
import { createAccount, setCallbackSettings } from '../support/fixtures';
import { accountAnswering, settled, useStatsApps } from '../support/stats-accounts';
import { sendEvents } from '../support/worker-process';

/** Own database: the all-accounts series must hold exactly this file's deliveries. */
const suite = useStatsApps('admin-series');
const { namespace, receivers } = suite;

function sum(points: Json[], field: string): number {
  return points.reduce((total, point) => total + (point[field] as number), 0);
}

describe('GET /admin/v1/stats/series', () => {
  let good: number;
  let bad: number;
  let filteredAccount: number;

  beforeAll(async () => {
    good = await accountAnswering(suite.configApi, suite.worker, receivers, 200);
    bad = await accountAnswering(suite.configApi, suite.worker, receivers, 500);
    filteredAccount = await createAccount(suite.configApi).then((account) => account.id);
    await setCallbackSettings(suite.worker.app, filteredAccount, { pushUrl: 'http://127.0.0.1:9/never', permissions: { customer_update: true } });
    const events = [
      ...(await sendEvents(suite.worker.app, good, [1, 2, 3].map((id) => ({ action: 'Customer_create', message: { id } })))),
      ...(await sendEvents(suite.worker.app, bad, [4, 5].map((id) => ({ action: 'Customer_create', message: { id } })))),
      ...(await sendEvents(suite.worker.app, filteredAccount, [{ action: 'Customer_create', message: { id: 6 } }])),
    ];
    await settled(namespace, events);
  });

  it('answers per-minute points from real deliveries, empty buckets included, oldest first', async () => {
    const answer = await adminCall(suite.configApi, 'GET', '/admin/v1/stats/series');
    expect(answer.status).toBe(200);
    expect(answer.body.bucket).toBe('1m');
    const points = answer.body.points as Json[];
    // The default hour, aligned to whole minutes: 60 or 61 points.
    expect(points.length).toBeGreaterThanOrEqual(60);
    expect(points.length).toBeLessThanOrEqual(61);
    const times = points.map((point) => Date.parse(point.t as string));
    expect(times.every((time, index) => index === 0 || time - times[index - 1] === 60_000)).toBe(true);
    expect(times[0] % 60_000).toBe(0);
    // 3 delivered at once; 2 failed after two attempts each; the filtered event is no delivery at all.
    expect({ delivered: sum(points, 'delivered'), failed: sum(points, 'failed'), attempts: sum(points, 'attempts'), failed_attempts: sum(points, 'failed_attempts') }).toEqual({
      delivered: 3,
      failed: 2,
      attempts: 7,
      failed_attempts: 4,
    });
    const empty = points.filter((point) => point.attempts === 0);
    expect(empty.length).toBeGreaterThan(50);
    for (const point of empty) expect(point).toMatchObject({ delivered: 0, failed: 0, failed_attempts: 0, p50: null, p95: null, p99: null });
  });

  it('computes latency percentiles from the histogram, within the bucket of the real latencies', async () => {
    const { rows } = await namespace.db.query<{ latency: number }>(
      `SELECT EXTRACT(EPOCH FROM d.delivered_at - e.created_at) * 1000 AS latency
         FROM events e JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary' WHERE e.account_id = $1`,
      [good],
    );
    const slowest = Math.max(...rows.map((row) => Number(row.latency)));
    const upper = LATENCY_BOUNDS_MS.find((bound) => bound > slowest) ?? Infinity;
    const answer = await adminCall(suite.configApi, 'GET', `/admin/v1/stats/series?account_id=${good}`);
    const withData = (answer.body.points as Json[]).filter((point) => point.delivered > 0);
    expect(withData.length).toBeGreaterThanOrEqual(1);
    for (const point of withData) {
      expect(point.p50).toEqual(expect.any(Number));
      expect(point.p50).toBeLessThanOrEqual(point.p95);
      expect(point.p95).toBeLessThanOrEqual(point.p99);
      expect(point.p99).toBeLessThanOrEqual(upper);
    }
    expect(sum(answer.body.points as Json[], 'failed')).toBe(0);
    const badSeries = await adminCall(suite.configApi, 'GET', `/admin/v1/stats/series?account_id=${bad}`);
    expect(sum(badSeries.body.points as Json[], 'failed_attempts')).toBe(4);
    expect((badSeries.body.points as Json[]).every((point) => point.p50 === null)).toBe(true);
  });

  it('sums the same outcomes into hourly and daily points, and reads rollups rather than the log', async () => {
    // Deleting the log must not change the series: it is served from the rollups alone.
    await namespace.db.query('DELETE FROM events');
    for (const bucket of ['1h', '1d']) {
      const answer = await adminCall(suite.configApi, 'GET', `/admin/v1/stats/series?bucket=${bucket}`);
      expect(answer.status).toBe(200);
      const points = answer.body.points as Json[];
      expect(points.length).toBe(bucket === '1h' ? 25 : 8);
      expect(sum(points, 'delivered')).toBe(3);
      expect(sum(points, 'attempts')).toBe(7);
      // One point holds them all (two if the deliveries straddled an hour boundary).
      const withLatency = points.filter((point) => point.p99 !== null).length;
      expect(withLatency).toBeGreaterThanOrEqual(1);
      expect(withLatency).toBeLessThanOrEqual(2);
    }
  });

  it('refuses bad parameters with 422 naming the field, and unknown accounts with 404', async () => {
    await expectQueryError(suite.configApi, 'GET', '/admin/v1/stats/series?bucket=5m', 'bucket');
    await expectQueryError(suite.configApi, 'GET', '/admin/v1/stats/series?since=yesterday', 'since');
    await expectQueryError(suite.configApi, 'GET', '/admin/v1/stats/series?until=soon', 'until');
    await expectQueryError(suite.configApi, 'GET', '/admin/v1/stats/series?account_id=abc', 'account_id');
    await expectQueryError(suite.configApi, 'GET', '/admin/v1/stats/series?bucket=1m&since=2020-01-01T00:00:00Z&until=2020-01-03T00:00:00Z', 'since');
    await expectQueryError(suite.configApi, 'GET', '/admin/v1/stats/series?since=2020-01-02&until=2020-01-01', 'until');
    // 1,500 points are fine; 1,501 are not.
    expect((await adminCall(suite.configApi, 'GET', '/admin/v1/stats/series?bucket=1m&since=2020-01-01T00:00:00Z&until=2020-01-02T01:00:00Z')).status).toBe(200);
    await expectQueryError(suite.configApi, 'GET', '/admin/v1/stats/series?bucket=1m&since=2020-01-01T00:00:00Z&until=2020-01-02T01:00:01Z', 'since');
    expect((await adminCall(suite.configApi, 'GET', '/admin/v1/stats/series?account_id=2000000000')).status).toBe(404);
  });
});
