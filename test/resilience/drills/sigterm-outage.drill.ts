import { setTimeout as sleep } from 'node:timers/promises';
import type { AppName, AppProcess } from '../app-process';
import type { Drill, DrillContext } from '../drill';
import { SIGTERM_EXIT_BOUND_MS } from '../drill-settings';
import type { DrillStack } from '../drill-stack';

const APPS: AppName[] = ['config-api', 'ingest', 'delivery-worker'];
/** How long the apps live with the outage before SIGTERM: long enough to be reconnecting, not just failing once. */
const OUTAGE_BEFORE_SIGTERM_MS = 3_000;
const STARTING_LISTEN_TIMEOUT_MS = 5_000;

interface OutageCase {
  name: string;
  /** The apps start while the service is already down (they never become ready). */
  downFromStart: boolean;
  down(stack: DrillStack): Promise<void>;
  up(stack: DrillStack): Promise<void>;
}

const redisDown = { down: (stack: DrillStack) => stack.redis.stop(), up: (stack: DrillStack) => stack.redis.start() };
const postgresDown = { down: (stack: DrillStack) => stack.postgres.stop(), up: (stack: DrillStack) => stack.postgres.start() };

const CASES: OutageCase[] = [
  { name: 'Redis down', downFromStart: false, ...redisDown },
  { name: 'Redis down from the start', downFromStart: true, ...redisDown },
  { name: 'PostgreSQL down', downFromStart: false, ...postgresDown },
];

/** SIGTERM to every app at once; each must have exited within the bound. */
async function terminate(context: DrillContext, outage: string, apps: AppProcess[]): Promise<void> {
  const alreadyExited = apps.filter((app) => !app.running);
  for (const app of alreadyExited) context.note(`${outage}: ${app.app} had exited before SIGTERM (${String((await app.exited).how)})`);
  const sentAt = Date.now();
  for (const app of apps) app.signal('SIGTERM');
  const timings = await Promise.all(
    apps
      .filter((app) => !alreadyExited.includes(app))
      .map(async (app) => {
        const exit = await app.exitWithin(SIGTERM_EXIT_BOUND_MS + 5_000);
        const tail = app.tail(6);
        await app.stop();
        if (!exit || exit.at - sentAt > SIGTERM_EXIT_BOUND_MS) {
          const took = exit
            ? `exited after ${((exit.at - sentAt) / 1000).toFixed(1)} s`
            : `still running ${(SIGTERM_EXIT_BOUND_MS + 5_000) / 1000} s after SIGTERM`;
          context.problem(`${outage}: ${app.app} ${took} (bound ${SIGTERM_EXIT_BOUND_MS / 1000} s); its last lines:\n${tail}`);
        }
        return `${app.app} ${exit ? `${((exit.at - sentAt) / 1000).toFixed(1)} s (${String(exit.how)})` : 'did not exit'}`;
      }),
  );
  context.note(`${outage}: exit after SIGTERM: ${timings.join(', ')}`);
}

async function run(context: DrillContext): Promise<void> {
  const stack = await context.openStack('sigterm', { retrySchedule: '1s,2s' });
  for (const outage of CASES) {
    if (outage.downFromStart) await outage.down(stack);
    const apps: AppProcess[] = [];
    for (const app of APPS) apps.push(await stack.startApp(app, { waitUntilReady: !outage.downFromStart }));
    if (outage.downFromStart) {
      // SIGTERM before the app has its handlers would only test Node's default; wait until it listens.
      const listening = await Promise.all(apps.map((app) => app.live(STARTING_LISTEN_TIMEOUT_MS)));
      const silent = apps.filter((_app, index) => !listening[index]).map((app) => app.app);
      if (silent.length > 0) context.note(`${outage.name}: ${silent.join(', ')} did not listen within ${STARTING_LISTEN_TIMEOUT_MS / 1000} s`);
    } else {
      await outage.down(stack);
    }
    await sleep(OUTAGE_BEFORE_SIGTERM_MS);
    try {
      await terminate(context, outage.name, apps);
    } finally {
      await outage.up(stack);
    }
  }
}

export const sigtermOutageDrill: Drill = {
  id: 6,
  title: 'SIGTERM to each app while Redis is down, and while PostgreSQL is down: each exits within 10 s',
  deadlineMs: () => 150_000,
  run,
};
