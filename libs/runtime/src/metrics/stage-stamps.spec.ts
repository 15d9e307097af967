import { register } from 'prom-client';
import { DELIVERY_STAGES, type DeliveryStage, STAGE_BUCKETS_SECONDS, stampStage, WorkerStageStamps } from './stage-stamps';

interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** The histogram's samples (prom-client names each: _bucket, _sum, _count). */
async function samples(): Promise<Sample[]> {
  return ((await register.getSingleMetric('callback_stage_seconds')?.get())?.values ?? []) as Sample[];
}

async function counts(): Promise<Record<DeliveryStage, number>> {
  const values = await samples();
  const result = Object.fromEntries(DELIVERY_STAGES.map((stage) => [stage, 0])) as Record<DeliveryStage, number>;
  for (const value of values) {
    if (value.metricName === 'callback_stage_seconds_count') result[value.labels.stage as DeliveryStage] = value.value;
  }
  return result;
}

async function sum(stage: DeliveryStage): Promise<number> {
  const values = await samples();
  return values.find((value) => value.metricName === 'callback_stage_seconds_sum' && value.labels.stage === stage)?.value ?? 0;
}

function delta(before: Record<DeliveryStage, number>, after: Record<DeliveryStage, number>): Record<string, number> {
  return Object.fromEntries(DELIVERY_STAGES.map((stage) => [stage, after[stage] - before[stage]]).filter(([, moved]) => moved !== 0));
}

const job = (eventSeq: string, timestamp: number, delay?: number) => ({ data: { eventSeq }, timestamp, opts: delay === undefined ? {} : { delay } });

describe('stage stamps', () => {
  it('has buckets from 0.1 ms to 10 s, rising', () => {
    expect(STAGE_BUCKETS_SECONDS[0]).toBe(0.0001);
    expect(STAGE_BUCKETS_SECONDS.at(-1)).toBe(10);
    expect(STAGE_BUCKETS_SECONDS.every((bound, index) => index === 0 || bound > (STAGE_BUCKETS_SECONDS[index - 1] ?? 0))).toBe(true);
  });

  it('observes the time between two stamps in seconds and answers the later one', async () => {
    const before = await sum('accepted_committed');
    expect(stampStage('accepted_committed', 1_000, 1_250)).toBe(1_250);
    expect((await sum('accepted_committed')) - before).toBeCloseTo(0.25, 6);
  });

  it('a step that is called and recorded moves each worker stage once', async () => {
    const stamps = new WorkerStageStamps();
    const before = await counts();
    stamps.taken(job('1', Date.now() - 5));
    stamps.callStarted('1');
    stamps.answered('1');
    stamps.recorded('1');
    expect(delta(before, await counts())).toEqual({ enqueued_taken: 1, taken_call_started: 1, call_started_answered: 1, answered_recorded: 1 });
    expect(stamps.size).toBe(0);
  });

  it('a job put back and taken again keeps its first take, so each stage counts once', async () => {
    const stamps = new WorkerStageStamps();
    const before = await counts();
    stamps.taken(job('2', Date.now()));
    stamps.taken(job('2', Date.now()));
    stamps.callStarted('2');
    expect(delta(before, await counts())).toEqual({ enqueued_taken: 1, taken_call_started: 1 });
  });

  it('a retry is due when its delay runs out, not when it was added', async () => {
    const stamps = new WorkerStageStamps();
    const before = await sum('enqueued_taken');
    stamps.taken(job('3', Date.now() - 60_000, 60_000));
    expect((await sum('enqueued_taken')) - before).toBeLessThan(1);
  });

  it('stamps out of order (no call, a forgotten step) observe nothing', async () => {
    const stamps = new WorkerStageStamps();
    const before = await counts();
    stamps.callStarted('4');
    stamps.answered('4');
    stamps.recorded('4');
    stamps.taken(job('5', Date.now()));
    stamps.forget('5');
    stamps.recorded('5');
    expect(delta(before, await counts())).toEqual({ enqueued_taken: 1 });
  });
});
