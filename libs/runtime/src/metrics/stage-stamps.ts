import { histogram } from './metrics';

/**
 * The stages of one delivery step, in path order. Ingest stamps the first two, the worker the rest;
 * `enqueued` on the worker's side is the job's own timestamp (set by BullMQ when the add was sent,
 * so `committed → enqueued` and `enqueued → taken` overlap by the add's round trip).
 */
export const DELIVERY_STAGES = [
  'accepted_committed',
  'committed_enqueued',
  'enqueued_taken',
  'taken_call_started',
  'call_started_answered',
  'answered_recorded',
] as const;
export type DeliveryStage = (typeof DELIVERY_STAGES)[number];

/** 1, 1.5, 2, 3, 5, 7 per decade from 0.1 ms to 10 s: percentiles read from the buckets stay within about a third. */
export const STAGE_BUCKETS_SECONDS: readonly number[] = [-4, -3, -2, -1, 0].flatMap((exponent) => [1, 1.5, 2, 3, 5, 7].map((step) => Number((step * 10 ** exponent).toPrecision(2)))).concat(10);

const stageSeconds = histogram('callback_stage_seconds', 'Time each delivery step spent between two stamps on its path, by stage', ['stage'], [...STAGE_BUCKETS_SECONDS]);
// Bound once: observing through a child skips hashing the label set on every stamp.
const stageChildren = new Map(DELIVERY_STAGES.map((stage) => [stage, stageSeconds.labels(stage)]));

/** Milliseconds since the epoch with sub-millisecond precision (Date.now() has whole ms only). */
export function stampNow(): number {
  return performance.timeOrigin + performance.now();
}

/** Observes `stage` as the time from `sinceMs` (epoch ms) to `atMs`; answers `atMs`, the next stage's start. */
export function stampStage(stage: DeliveryStage, sinceMs: number, atMs: number = stampNow()): number {
  stageChildren.get(stage)?.observe(Math.max(0, atMs - sinceMs) / 1000);
  return atMs;
}

/** Ingest's two stages of one accepted event: accepted → committed → enqueued. */
export function stampIngestStages(acceptedAt: number, committedAt: number, enqueuedAt: number): void {
  stampStage('committed_enqueued', stampStage('accepted_committed', acceptedAt, committedAt), enqueuedAt);
}

/** A job as the worker takes it: the fields BullMQ keeps anyway. */
export interface StampedJob {
  data: { eventSeq: string };
  timestamp: number;
  opts: { delay?: number };
}

type Mark = 'taken' | 'call_started' | 'answered';

/**
 * Marks not forgotten are dropped oldest first past this many (a job deferred here and finished by
 * another worker never comes back to be forgotten).
 */
const MAX_MARKS = 50_000;

/**
 * The worker's stamps, per event seq: each stamp observes the stage since the previous one of the same
 * step. A job taken again after being put back (busy, paced) keeps its first `taken` stamp, so the time
 * spent put back shows in `taken → call started` and each stage counts once per step.
 */
export class WorkerStageStamps {
  private readonly marks = new Map<string, { mark: Mark; at: number }>();

  taken(job: StampedJob): void {
    if (this.marks.has(job.data.eventSeq)) return;
    // Due when added, or when its add's delay (a retry's schedule) ran out.
    const due = job.timestamp + (job.opts.delay ?? 0);
    this.set(job.data.eventSeq, 'taken', stampStage('enqueued_taken', due));
  }

  callStarted(eventSeq: string): void {
    this.advance(eventSeq, 'taken', 'call_started', 'taken_call_started');
  }

  answered(eventSeq: string): void {
    this.advance(eventSeq, 'call_started', 'answered', 'call_started_answered');
  }

  /** The step's outcome is durably written; a step recorded without a call (breaker open) observes nothing. */
  recorded(eventSeq: string): void {
    const previous = this.marks.get(eventSeq);
    if (previous?.mark === 'answered') stampStage('answered_recorded', previous.at);
    this.marks.delete(eventSeq);
  }

  /** The job is done with (not merely put back). */
  forget(eventSeq: string): void {
    this.marks.delete(eventSeq);
  }

  get size(): number {
    return this.marks.size;
  }

  private advance(eventSeq: string, from: Mark, to: Mark, stage: DeliveryStage): void {
    const previous = this.marks.get(eventSeq);
    if (previous?.mark !== from) return;
    this.set(eventSeq, to, stampStage(stage, previous.at));
  }

  private set(eventSeq: string, mark: Mark, at: number): void {
    this.marks.delete(eventSeq);
    this.marks.set(eventSeq, { mark, at });
    if (this.marks.size > MAX_MARKS) {
      const oldest = this.marks.keys().next();
      if (!oldest.done) this.marks.delete(oldest.value);
    }
  }
}

/** One per process: the processor, the call and the recorder of a step meet here without passing it along. */
export const workerStageStamps = new WorkerStageStamps();
