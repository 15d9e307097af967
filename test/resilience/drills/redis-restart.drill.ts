import type { Drill } from '../drill';
import { expectAllAccepted, finishEventDrill, waitForStatusesOrRecord } from '../drill-steps';

/**
 * Every event fails its first call and waits for a retry, a delayed job that exists only in Redis; then
 * Redis is replaced by an empty one on the same port while every app keeps running. The reconciler must
 * find the stored, overdue events and deliver them; ingest must keep accepting across the restart.
 */
export const redisRestartDrill: Drill = {
  id: 2,
  title: 'Redis restarted empty while events wait for retries; no app process restarted',
  deadlineMs: (quick) => (quick ? 150_000 : 300_000),
  async run(context) {
    const total = context.quick ? 1_000 : 5_000;
    const afterRestart = context.quick ? 200 : 1_000;
    // Ten retries three seconds apart: the events are still mid-schedule when Redis comes back.
    // The breaker stays out of the way (it has a drill of its own): every event gets its first call at once.
    const stack = await context.openStack('redis-restart', {
      retrySchedule: Array(10).fill('3s').join(','),
      env: { BREAKER_FAILURE_THRESHOLD: '10000' },
    });
    stack.receiver.behave('error');
    const [ingest] = await stack.startApps('ingest', 1);
    await stack.startApps('delivery-worker', 1);
    const load = stack.load([ingest], 500);
    await load.send(total, { concurrency: 2 });
    await waitForStatusesOrRecord(context, stack, 'every event to wait for a retry', (counts) => (counts.retrying ?? 0) >= total, 60_000);

    const keysBefore = await stack.redis.keyCount();
    await stack.redis.stop();
    await stack.redis.start();
    context.note(`Redis replaced: ${keysBefore} keys before, ${await stack.redis.keyCount()} in the new one`);
    stack.receiver.behave('ok');
    await load.send(afterRestart, { concurrency: 1 });
    expectAllAccepted(context, load);
    await finishEventDrill(context, stack, load, { timeoutMs: context.quick ? 90_000 : 180_000 });
  },
};
