import { setTimeout as sleep } from 'node:timers/promises';
import { SAMPLE_MESSAGES } from '@app/payloads';

/** One answer of ingest to a batch: what was sent when, and what came back. */
export interface IngestAnswer {
  /** HTTP status, or `error` when no answer came (connection refused, time-out). */
  status: number | 'error';
  sentAt: number;
  answeredAt: number;
  events: number;
}

export interface LoadOptions {
  ingestUrls: string[];
  accountId: number;
  ingestToken: string;
  /** Event ids are `<prefix>-<n>`, so every event of a drill is known by id before it is sent. */
  idPrefix: string;
  batchSize: number;
  /** Event n is about customer `n mod subjects` + 1 (ordering drills); unset: every event its own customer. */
  subjects?: number;
}

const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Posts events to ingest as a domain service would (`POST /v1/events/batch`, our own event ids), round
 * robin over the ingest processes. An event counts as accepted only when a 202 answer lists it as
 * `accepted` (or `duplicate`: stored by an earlier try). Refused batches are kept and can be re-sent with
 * the same ids, as a producer retrying a 503 would.
 */
export class EventLoad {
  readonly accepted = new Set<string>();
  readonly answers: IngestAnswer[] = [];
  /** Items a 202 answer rejected: never expected from the valid events the load sends. */
  rejected = 0;
  private readonly refused: number[][] = [];
  private nextNumber = 0;
  private requests = 0;

  constructor(private readonly options: LoadOptions) {}

  get sent(): number {
    return this.nextNumber;
  }

  get refusedCount(): number {
    return this.refused.reduce((sum, batch) => sum + batch.length, 0);
  }

  /** A restarted ingest listens on a new port: the load posts there from now on. */
  replaceIngest(oldUrl: string, newUrl: string): void {
    const index = this.options.ingestUrls.indexOf(oldUrl);
    if (index < 0) throw new Error(`${oldUrl} is not one of this load's ingest processes`);
    this.options.ingestUrls[index] = newUrl;
  }

  /**
   * Sends `total` new events with `concurrency` batches in flight; with `intervalMs`, one batch starts
   * every interval (a steady producer) instead of as fast as ingest answers.
   */
  async send(total: number, { concurrency = 1, intervalMs = 0 }: { concurrency?: number; intervalMs?: number } = {}): Promise<void> {
    const end = this.nextNumber + total;
    let nextSlot = Date.now();
    const lane = async (): Promise<void> => {
      while (this.nextNumber < end) {
        const first = this.nextNumber;
        this.nextNumber = Math.min(end, first + this.options.batchSize);
        const numbers = Array.from({ length: this.nextNumber - first }, (_, index) => first + index);
        if (intervalMs > 0) {
          const wait = nextSlot - Date.now();
          nextSlot = Math.max(nextSlot, Date.now()) + intervalMs;
          if (wait > 0) await sleep(wait);
        }
        await this.post(numbers);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, () => lane()));
  }

  /** Re-sends refused batches (same ids) until every one is accepted or `deadline` (epoch ms) passes. */
  async resendRefused(deadline: number): Promise<void> {
    while (this.refused.length > 0 && Date.now() < deadline) {
      const numbers = this.refused.shift() as number[];
      if (!(await this.post(numbers))) await sleep(500);
    }
  }

  /** How many answers had each status, e.g. `202×40 503×12`. */
  describeAnswers(answers = this.answers): string {
    const counts = new Map<string, number>();
    for (const answer of answers) counts.set(String(answer.status), (counts.get(String(answer.status)) ?? 0) + 1);
    return [...counts].map(([status, count]) => `${status}×${count}`).join(' ') || 'none';
  }

  eventId(number: number): string {
    return `${this.options.idPrefix}-${number}`;
  }

  /** Posts one batch; true when ingest answered 202. Refused batches are kept for resendRefused. */
  private async post(numbers: number[]): Promise<boolean> {
    const url = this.options.ingestUrls[this.requests % this.options.ingestUrls.length];
    this.requests += 1;
    const events = numbers.map((number) => ({
      event_id: this.eventId(number),
      account_id: this.options.accountId,
      action: 'Customer_create',
      message: { ...SAMPLE_MESSAGES.Customer_create, id: this.options.subjects ? (number % this.options.subjects) + 1 : number + 1 },
    }));
    const sentAt = Date.now();
    let status: number | 'error' = 'error';
    let body: { results?: { event_id?: string; status: string }[] } = {};
    try {
      const response = await fetch(`${url}/v1/events/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.options.ingestToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ events }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      status = response.status;
      body = status === 202 ? ((await response.json()) as typeof body) : {};
      if (status !== 202) await response.body?.cancel();
    } catch {
      status = 'error';
    }
    this.answers.push({ status, sentAt, answeredAt: Date.now(), events: numbers.length });
    if (status !== 202) {
      this.refused.push(numbers);
      return false;
    }
    for (const result of body.results ?? []) {
      if ((result.status === 'accepted' || result.status === 'duplicate') && result.event_id) this.accepted.add(result.event_id);
      else this.rejected += 1;
    }
    return true;
  }
}
