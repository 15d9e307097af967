import { cpus, totalmem } from 'node:os';
import { assertBuilt } from './app-process';
import { cleanup } from './cleanup-stack';
import { type Drill, type DrillContext, type DrillResult, passed } from './drill';
import { formatDrill, formatSummary } from './drill-report';
import { DrillStack } from './drill-stack';
import { duplicatesDrill } from './drills/duplicates.drill';
import { flappingReceiverDrill } from './drills/flapping-receiver.drill';
import { orderingRedisRestartDrill } from './drills/ordering-redis-restart.drill';
import { postgresOutageDrill } from './drills/postgres-outage.drill';
import { redisRestartDrill } from './drills/redis-restart.drill';
import { sigtermOutageDrill } from './drills/sigterm-outage.drill';
import { scaledOutDrill, singleWorkerKillDrill } from './drills/worker-kill.drill';
import { PostgresInstance } from './postgres-instance';

/**
 * `npm run test:resilience [-- --quick] [-- --only=2,4] [-- --lanes=2]`: the fault drills, on the built
 * apps as separate production processes against a PostgreSQL and a redis-server of their own. Prints each
 * drill's figures, a summary table and `N passed, M failed`; exits 1 when any drill lost an event or
 * broke a bound. With --lanes=N, N drills run at once, each lane with a PostgreSQL of its own (drills stop
 * theirs); a drill marked `alone` runs after them with nothing beside it.
 */
const DRILLS: Drill[] = [
  singleWorkerKillDrill,
  redisRestartDrill,
  postgresOutageDrill,
  flappingReceiverDrill,
  scaledOutDrill,
  sigtermOutageDrill,
  orderingRedisRestartDrill,
  duplicatesDrill,
];

function selectedDrills(args: string[]): Drill[] {
  const only = args.find((arg) => arg.startsWith('--only='));
  if (!only) return DRILLS;
  const ids = only.slice('--only='.length).split(',').map(Number);
  const unknown = ids.filter((id) => !DRILLS.some((drill) => drill.id === id));
  if (unknown.length > 0) throw new Error(`--only: no drill ${unknown.join(', ')} (drills are 1 to ${DRILLS.length})`);
  return DRILLS.filter((drill) => ids.includes(drill.id));
}

function laneCount(args: string[]): number {
  const lanes = Number(args.find((arg) => arg.startsWith('--lanes='))?.slice('--lanes='.length) ?? 1);
  if (!Number.isInteger(lanes) || lanes < 1 || lanes > 4) throw new Error('--lanes: a whole number from 1 to 4');
  return lanes;
}

async function runDrill(drill: Drill, postgres: PostgresInstance, quick: boolean): Promise<DrillResult> {
  const result: DrillResult = { id: drill.id, title: drill.title, durationMs: 0, problems: [], notes: [] };
  const stacks: DrillStack[] = [];
  let over = false;
  // After the deadline a drill's own steps may still be winding down: nothing they say counts any more.
  const context: DrillContext = {
    quick,
    postgres,
    openStack: async (name, options) => {
      const stack = await DrillStack.open(postgres, name, options);
      stacks.push(stack);
      return stack;
    },
    problem: (text) => void (over || result.problems.push(text)),
    note: (text) => void (over || result.notes.push(text)),
    report: (tally) => void (over || (result.tally = tally)),
  };
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      drill.run(context),
      new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new Error(`did not finish within ${drill.deadlineMs(quick) / 1000} s`)), drill.deadlineMs(quick));
      }),
    ]);
  } catch (error) {
    result.problems.push(error instanceof Error ? error.message : String(error));
  } finally {
    over = true;
    clearTimeout(timer);
    result.durationMs = Date.now() - started;
    for (const stack of stacks) await stack.close();
    // A drill that failed during its PostgreSQL outage must not leave the next drill without a database.
    if (!postgres.running) await postgres.start();
  }
  return result;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const drills = selectedDrills(args);
  assertBuilt();
  const machine = `${cpus().length} cores (${cpus()[0]?.model.trim() ?? 'unknown CPU'}), ${Math.round(totalmem() / 2 ** 30)} GiB`;
  const lanes = laneCount(args);
  process.stdout.write(`fault drills${quick ? ' (quick)' : ''} on ${machine}${lanes > 1 ? `, ${lanes} at once` : ''}\n\n`);

  const results: DrillResult[] = [];
  const runLane = async (queue: Drill[], postgres: PostgresInstance): Promise<void> => {
    for (let drill = queue.shift(); drill; drill = queue.shift()) {
      const result = await runDrill(drill, postgres, quick);
      results.push(result);
      process.stdout.write(`${formatDrill(result)}\n\n`);
    }
  };
  const instances = await Promise.all(Array.from({ length: lanes }, () => PostgresInstance.create()));
  await Promise.all(instances.map((instance) => instance.start()));
  const [first] = instances;
  if (lanes === 1) await runLane([...drills], first);
  else {
    const shared = drills.filter((drill) => !drill.alone);
    await Promise.all(instances.map((instance) => runLane(shared, instance)));
    await runLane(drills.filter((drill) => drill.alone), first);
  }
  await cleanup.runAll();
  results.sort((a, b) => a.id - b.id);
  process.stdout.write(`${formatSummary(results, machine)}\n`);
  return results.every(passed) ? 0 : 1;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping every process the drills started\n`);
    void cleanup.runAll().finally(() => process.exit(130));
  });
}
// Whatever ends the run, nothing it started outlives it.
process.on('exit', () => cleanup.runAllSync());

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    process.stderr.write(`fault drills failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    await cleanup.runAll();
    process.stdout.write('0 passed, 1 failed\n');
    process.exit(1);
  },
);
