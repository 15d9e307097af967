import type { Drill } from '../drill';
import { expectAllAccepted, finishEventDrill, waitForStatusesOrRecord } from '../drill-steps';

const SUBJECTS = 50;

/**
 * Ordering "subject" through a Redis restart: the first event of every subject fails and waits for a
 * retry while the later ones of its subject are held (delayed jobs, Redis only); then Redis is replaced
 * by an empty one. The rows are the order's only state, so the reconciler's re-added jobs must still
 * call every subject's events in accepted order: the receiver counts any call that goes back.
 */
export const orderingRedisRestartDrill: Drill = {
  id: 7,
  title: 'Ordering "subject" through Redis restarted empty: no subject called out of order',
  deadlineMs: (quick) => (quick ? 150_000 : 300_000),
  async run(context) {
    const total = context.quick ? 500 : 2_000;
    const stack = await context.openStack('ordering-redis-restart', {
      retrySchedule: Array(10).fill('2s').join(','),
      env: { BREAKER_FAILURE_THRESHOLD: '10000' },
    });
    await stack.orderBySubject();
    stack.receiver.checkOrder(SUBJECTS);
    stack.receiver.behave('error');
    const [ingest] = await stack.startApps('ingest', 1);
    await stack.startApps('delivery-worker', 1);
    const load = stack.load([ingest], 250, SUBJECTS);
    await load.send(total, { concurrency: 1 });
    await waitForStatusesOrRecord(context, stack, 'the first event of every subject to wait for a retry', (counts) => (counts.retrying ?? 0) >= SUBJECTS, 60_000);

    const keysBefore = await stack.redis.keyCount();
    await stack.redis.stop();
    await stack.redis.start();
    context.note(`Redis replaced: ${keysBefore} keys before, ${await stack.redis.keyCount()} in the new one`);
    stack.receiver.behave('ok');
    expectAllAccepted(context, load);
    await finishEventDrill(context, stack, load, { timeoutMs: context.quick ? 120_000 : 240_000 });
    context.note(`${SUBJECTS} subjects, ${total} events; calls out of order: ${stack.receiver.outOfOrder}`);
    if (stack.receiver.outOfOrder > 0) context.problem(`${stack.receiver.outOfOrder} calls reached an event after a later event of its subject`);
  },
};
