import type { Drill, DrillContext } from '../drill';
import { expectAllAccepted, finishEventDrill, waitOrRecord } from '../drill-steps';

interface WorkerKillPlan {
  name: string;
  total: number;
  ingestCount: number;
  workerCount: number;
  /** Start a replacement worker after the kill (drill 1) or let the survivors finish (drill 5). */
  replace: boolean;
  timeoutMs: number;
}

/**
 * Events flow through ingest to the workers while one worker is SIGKILLed once a quarter of them has
 * been delivered: its active jobs come back when their BullMQ locks lapse, the rest were never its own.
 */
async function killWorkerMidRun(context: DrillContext, plan: WorkerKillPlan): Promise<void> {
  const stack = await context.openStack(plan.name, { retrySchedule: '1s,2s,5s' });
  const ingest = await stack.startApps('ingest', plan.ingestCount);
  const workers = await stack.startApps('delivery-worker', plan.workerCount);
  const load = stack.load(ingest, 500);
  const sending = load.send(plan.total, { concurrency: 2 * plan.ingestCount });

  const victim = workers[0];
  if (await waitOrRecord(context, 'a quarter of the events to be delivered', () => stack.receiver.deliveredCount >= plan.total / 4, plan.timeoutMs)) {
    victim.signal('SIGKILL');
    await victim.exited;
    context.note(`${victim.label} SIGKILLed after ${stack.receiver.deliveredCount} deliveries, ${load.sent} events sent`);
    if (plan.replace) await stack.startApp('delivery-worker');
  }
  await sending;
  expectAllAccepted(context, load);
  await finishEventDrill(context, stack, load, { timeoutMs: plan.timeoutMs, killed: [victim] });
}

function workerKillDrill(id: number, title: string, plan: (quick: boolean) => Omit<WorkerKillPlan, 'timeoutMs'>): Drill {
  return {
    id,
    title,
    deadlineMs: (quick) => (quick ? 150_000 : 600_000),
    run: (context) => killWorkerMidRun(context, { ...plan(context.quick), timeoutMs: context.quick ? 90_000 : 360_000 }),
  };
}

export const singleWorkerKillDrill = workerKillDrill(
  1,
  'SIGKILL of a worker mid-run (20,000 events, quick 2,000); a second worker finishes',
  (quick) => ({ name: 'worker-kill', total: quick ? 2_000 : 20_000, ingestCount: 1, workerCount: 1, replace: true }),
);

export const scaledOutDrill = workerKillDrill(
  5,
  'Two ingest and three worker processes, one worker SIGKILLed mid-run',
  (quick) => ({ name: 'scaled-out', total: quick ? 2_000 : 10_000, ingestCount: 2, workerCount: 3, replace: false }),
);
