import { DELIVERY_STAGES, type DeliveryStage } from '@app/runtime/metrics/stage-stamps';
import { metricsText } from './metric-scrape';

/** One stage's cumulative buckets (upper bound in seconds → count), as /metrics shows them. */
interface StageBuckets {
  bounds: number[];
  counts: number[];
  sum: number;
}

/** `callback_stage_seconds` of every scraped app, summed by stage (ingest's stages and the worker's). */
export type StageSnapshot = Map<DeliveryStage, StageBuckets>;

/** A stage over an interval: how many steps passed it, and where its median and p99 fall (ms, read from the buckets). */
export interface StageFigure {
  count: number;
  p50: number;
  p99: number;
  meanMs: number;
}
export type StageSplit = Record<DeliveryStage, StageFigure>;

/** `name{labels} value` lines of the histogram; prom-client writes `le` before the other labels. */
const SAMPLE = /^callback_stage_seconds_(bucket|sum)\{([^}]*)\} (\S+)$/;

function labelsOf(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/([a-z_]+)="([^"]*)"/g)].map(([, name, value]) => [name ?? '', value ?? '']));
}

function isStage(name: string | undefined): name is DeliveryStage {
  return (DELIVERY_STAGES as readonly string[]).includes(name ?? '');
}

/** Adds the histogram's samples in one /metrics text to `snapshot` (apps' counts add up by stage and bound). */
export function addStageSamples(snapshot: StageSnapshot, text: string): StageSnapshot {
  for (const line of text.split('\n')) {
    const sample = SAMPLE.exec(line);
    if (!sample) continue;
    const labels = labelsOf(sample[2] ?? '');
    if (!isStage(labels.stage)) continue;
    let entry = snapshot.get(labels.stage);
    if (!entry) snapshot.set(labels.stage, (entry = { bounds: [], counts: [], sum: 0 }));
    const value = Number(sample[3]);
    if (sample[1] === 'sum') {
      entry.sum += value;
      continue;
    }
    const bound = labels.le === '+Inf' ? Infinity : Number(labels.le);
    const index = entry.bounds.indexOf(bound);
    if (index === -1) {
      entry.bounds.push(bound);
      entry.counts.push(value);
    } else entry.counts[index] = (entry.counts[index] ?? 0) + value;
  }
  return snapshot;
}

/** Scrapes the apps' /metrics once; an app that does not answer adds nothing. */
export async function stageSnapshot(appUrls: readonly string[]): Promise<StageSnapshot> {
  const snapshot: StageSnapshot = new Map();
  for (const text of await Promise.all(appUrls.map(metricsText))) if (text !== null) addStageSamples(snapshot, text);
  return snapshot;
}

/** Total observations of `stage` in a snapshot (its +Inf bucket). */
export function stageCount(snapshot: StageSnapshot, stage: DeliveryStage): number {
  return snapshot.get(stage)?.counts.at(-1) ?? 0;
}

/**
 * The `q` quantile (0–1) of cumulative bucket counts, linear within the bucket it falls in, in ms; a
 * value past the last finite bound reads as that bound.
 */
export function bucketQuantileMs(bounds: readonly number[], cumulative: readonly number[], q: number): number {
  const total = cumulative.at(-1) ?? 0;
  if (total <= 0) return 0;
  const rank = q * total;
  for (let index = 0; index < bounds.length; index += 1) {
    const count = cumulative[index] ?? 0;
    if (count < rank) continue;
    const upper = bounds[index] ?? 0;
    const lower = index === 0 ? 0 : (bounds[index - 1] ?? 0);
    if (!Number.isFinite(upper)) return lower * 1000;
    const below = index === 0 ? 0 : (cumulative[index - 1] ?? 0);
    const within = count - below;
    return (lower + (within > 0 ? (upper - lower) * ((rank - below) / within) : 0)) * 1000;
  }
  return (bounds.filter(Number.isFinite).at(-1) ?? 0) * 1000;
}

/** Every stage between two snapshots of the same apps. */
export function stageSplit(before: StageSnapshot, after: StageSnapshot): StageSplit {
  const split = {} as StageSplit;
  for (const stage of DELIVERY_STAGES) {
    const now = after.get(stage);
    const then = before.get(stage);
    const bounds = now?.bounds ?? [];
    const cumulative = bounds.map((bound, index) => (now?.counts[index] ?? 0) - (then?.counts[then.bounds.indexOf(bound)] ?? 0));
    const count = cumulative.at(-1) ?? 0;
    const sum = (now?.sum ?? 0) - (then?.sum ?? 0);
    split[stage] = { count, p50: bucketQuantileMs(bounds, cumulative, 0.5), p99: bucketQuantileMs(bounds, cumulative, 0.99), meanMs: count ? (sum / count) * 1000 : 0 };
  }
  return split;
}

/** Short names for the notes. */
const SHORT: Record<DeliveryStage, string> = {
  accepted_committed: 'accepted→committed',
  committed_enqueued: 'committed→enqueued',
  enqueued_taken: 'enqueued→taken',
  taken_call_started: 'taken→call',
  call_started_answered: 'call→answered',
  answered_recorded: 'answered→recorded',
};

/** `stage p50/p99 ms` for each stage, in path order, for a scenario's notes. */
export function stageSplitText(split: StageSplit): string {
  const ms = (value: number): string => (value < 10 ? value.toFixed(2) : value.toFixed(1));
  return DELIVERY_STAGES.map((stage) => `${SHORT[stage]} ${ms(split[stage].p50)}/${ms(split[stage].p99)}`).join(', ');
}
