import { setTimeout as sleep } from 'node:timers/promises';
import type { Drill, DrillContext } from '../drill';
import type { ReceiverBehaviour } from '../drill-receiver';
import { DELIVERY_TIMEOUT_MS, scheduleMs } from '../drill-settings';
import type { DrillStack } from '../drill-stack';
import { expectAllAccepted, finishEventDrill } from '../drill-steps';

const SCHEDULE = '1s,2s,3s,4s';
const PHASE_MS = 2_000;
const PHASES: ReceiverBehaviour[] = ['error', 'hang', 'ok'];
const BATCH = 10;
const BATCH_INTERVAL_MS = 200;

/**
 * The longest an event may honestly stay queued/retrying: its delays with the +15 % jitter, a full
 * time-out for every attempt, and slack for the reconciler (RECONCILE_INTERVAL 1 s) and the queue.
 */
function scheduleBoundMs(delays: number[]): number {
  return Math.ceil(delays.reduce((sum, delay) => sum + delay, 0) * 1.15) + (delays.length + 1) * DELIVERY_TIMEOUT_MS + 5_000;
}

/** Counts, every second until stopped, events still pending longer than `boundMs` after they were stored. */
class StuckWatch {
  worst = 0;
  example = '';
  private stopped = false;

  constructor(
    private readonly stack: DrillStack,
    private readonly boundMs: number,
  ) {}

  async watch(): Promise<void> {
    while (!this.stopped) {
      const [row] = await this.stack
        .query<{ stuck: string; example: string | null }>(
          `SELECT count(*) AS stuck, min(e.event_id) AS example FROM events e
             JOIN deliveries d ON d.event_seq = e.seq AND d.destination_id = 'primary'
            WHERE d.status IN ('queued', 'retrying') AND e.created_at < now() - make_interval(secs => $1::float8 / 1000)`,
          [this.boundMs],
        )
        .catch(() => [{ stuck: '0', example: null }]);
      if (Number(row.stuck) > this.worst) [this.worst, this.example] = [Number(row.stuck), row.example ?? ''];
      await sleep(1_000);
    }
  }

  stop(): void {
    this.stopped = true;
  }
}

/** Deliveries not final yet, however young: once none is (and none is redelivered), none can be stuck later. */
async function openDeliveries(stack: DrillStack): Promise<number> {
  const [row] = await stack
    .query<{ open: string }>(`SELECT count(*) AS open FROM deliveries WHERE destination_id = 'primary' AND status IN ('queued', 'retrying')`)
    .catch(() => [{ open: '1' }]);
  return Number(row.open);
}

async function flap(stack: DrillStack, durationMs: number): Promise<void> {
  const end = Date.now() + durationMs;
  for (let phase = 0; Date.now() < end; phase += 1) {
    stack.receiver.behave(PHASES[phase % PHASES.length]);
    await sleep(Math.min(PHASE_MS, Math.max(0, end - Date.now())));
  }
  stack.receiver.behave('ok');
}

/** The breaker's cooldown in this drill: a held delivery is probed again this often. */
const COOLDOWN_MS = 10_000;

async function run(context: DrillContext): Promise<void> {
  const flapMs = context.quick ? 20_000 : 60_000;
  const delays = scheduleMs(SCHEDULE);
  // The breaker holds deliveries while it is open without spending their schedule (CONTRACT §5): an
  // event accepted as the flapping starts may be held through all of it and one cooldown after (the
  // probe that finds the receiver back), then go through its schedule.
  const boundMs = scheduleBoundMs(delays) + flapMs + COOLDOWN_MS;
  const stack = await context.openStack('flapping', {
    retrySchedule: SCHEDULE,
    env: { BREAKER_FAILURE_THRESHOLD: '5', BREAKER_COOLDOWN: `${COOLDOWN_MS / 1000}s` },
  });
  const [ingest] = await stack.startApps('ingest', 1);
  await stack.startApps('delivery-worker', 2);
  const load = stack.load([ingest], BATCH);
  const watch = new StuckWatch(stack, boundMs);
  const watching = watch.watch();

  // Events keep arriving for the whole flapping minute, so they meet every phase and an open breaker.
  await Promise.all([flap(stack, flapMs), load.send(Math.floor(flapMs / BATCH_INTERVAL_MS) * BATCH, { intervalMs: BATCH_INTERVAL_MS })]);
  context.note(`receiver flapped ${PHASES.join('/')} every ${PHASE_MS / 1000} s for ${flapMs / 1000} s, then answered 200`);
  // The last event's schedule is over after the bound; the watch keeps looking until then, or until no
  // delivery is open any more (every accepted event's delivery row was written with it).
  const bound = Date.now() + boundMs;
  while (Date.now() < bound && (await openDeliveries(stack)) > 0) await sleep(500);
  watch.stop();
  await watching;

  expectAllAccepted(context, load);
  await finishEventDrill(context, stack, load, { timeoutMs: 15_000, expectation: { failedAfterAttempts: delays.length + 1 } });
  const [{ attempts }] = await stack.query<{ attempts: string }>('SELECT count(*) AS attempts FROM delivery_attempts');
  context.note(`${attempts} attempts recorded for ${stack.receiver.calls} calls received: every attempt is a call (a held delivery records none)`);
  if (Number(attempts) > stack.receiver.calls) context.problem(`${attempts} attempts recorded but only ${stack.receiver.calls} calls received: an attempt without a call`);
  if (watch.worst > 0) {
    context.problem(
      `${watch.worst} events were still queued/retrying ${(boundMs / 1000).toFixed(1)} s after they were accepted, past their ` +
        `whole schedule, the flapping and one cooldown (${SCHEDULE}; e.g. ${watch.example})`,
    );
  }
}

export const flappingReceiverDrill: Drill = {
  id: 4,
  title: 'A receiver flapping between 500s, time-outs and 200s: every event delivered or failed after its full schedule',
  deadlineMs: (quick) => (quick ? 120_000 : 240_000),
  run,
};
