import { setTimeout as sleep } from 'node:timers/promises';
import type { Drill } from '../drill';
import { finishEventDrill } from '../drill-steps';

const BATCH = 20;
const RUN_UP_MS = 5_000;

/**
 * A steady producer posts small batches while PostgreSQL is stopped for a while and started again. While
 * it is down ingest must refuse (503), never answer 202 for what it has not stored; refused batches are
 * re-sent as a producer would; the workers must carry on by themselves once it is back.
 */
export const postgresOutageDrill: Drill = {
  id: 3,
  title: 'PostgreSQL stopped during a run, then started: 503 while down, nothing accepted lost',
  deadlineMs: (quick) => (quick ? 150_000 : 300_000),
  async run(context) {
    const outageMs = context.quick ? 8_000 : 20_000;
    const intervalMs = context.quick ? 200 : 100;
    const total = Math.round((RUN_UP_MS + outageMs + RUN_UP_MS) / intervalMs) * BATCH;
    const stack = await context.openStack('postgres-outage', { retrySchedule: '1s,2s,5s,10s,10s' });
    const [ingest] = await stack.startApps('ingest', 1);
    await stack.startApps('delivery-worker', 2);
    const load = stack.load([ingest], BATCH);
    const sending = load.send(total, { concurrency: 4, intervalMs });

    await sleep(RUN_UP_MS);
    await context.postgres.stop();
    const downAt = Date.now();
    await sleep(outageMs);
    const upAt = Date.now();
    await context.postgres.start();
    context.note(`PostgreSQL down for ${((upAt - downAt) / 1000).toFixed(1)} s`);
    await sending;
    await load.resendRefused(Date.now() + 30_000);
    if (load.refusedCount > 0) context.problem(`${load.refusedCount} events still refused 30 s after PostgreSQL came back`);

    const whileDown = load.answers.filter((answer) => answer.sentAt >= downAt && answer.answeredAt <= upAt);
    context.note(`answers to batches sent and answered while PostgreSQL was down: ${load.describeAnswers(whileDown)}`);
    if (whileDown.length === 0) context.problem('no batch was answered while PostgreSQL was down');
    if (whileDown.some((answer) => answer.status !== 503)) {
      context.problem(`while PostgreSQL was down ingest answered other than 503: ${load.describeAnswers(whileDown)}`);
    }
    await finishEventDrill(context, stack, load, { timeoutMs: context.quick ? 90_000 : 180_000 });
  },
};
