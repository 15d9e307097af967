import { type DeliveryJobData, deliveryJob, loadEnvironment, type OutboundRequest, type OutboundResponse } from '@app/runtime';
import { generateSigningSecret } from '@app/signing';
import type { AccountDeliverySettings, AccountSettingsCache } from './account-settings.cache';
import { type DeliveryJob, DeliveryService } from './delivery.service';
import { OutcomeRecorder } from './outcome/outcome-recorder.service';
import type { Outcome, OutcomeStore } from './outcome/outcome-store';
import type { EventLoader, PendingEvent } from './loading/event-loader';
import { CallLimit } from './admission/call-limit';
import { AdmissionDoor } from './admission/admission-door';
import type { Admission, EndpointAdmission, EndpointLease } from './admission/endpoint-admission';
import type { EndpointDisabling } from './admission/endpoint-disabling';
import type { SubjectOrder } from './ordering/subject-order';
import { ErasedEventError, type ErasureCheck } from './erasure-check';

/**
 * DeliveryService with in-memory collaborators, for its unit tests: no PostgreSQL, Redis or network. The
 * e2e suites (test/delivery*.e2e-spec.ts) run the same code against the real ones.
 */

export const SECRET = generateSigningSecret();

export function pendingEvent(overrides: Partial<PendingEvent> = {}): PendingEvent {
  return {
    seq: '42',
    eventId: 'evt-42',
    accountId: 7,
    action: 'Customer_create',
    messageText: '{"id":1,"tags":["vip"]}',
    status: 'queued',
    attempts: 0,
    series: 0,
    seriesAttempts: 0,
    createdAt: new Date(Date.now() - 1000),
    test: false,
    erased: false,
    ...overrides,
  };
}

export function accountSettings(overrides: Partial<AccountDeliverySettings> = {}): AccountDeliverySettings {
  return {
    accountId: 7,
    pushUrl: 'https://receiver.example/hook',
    encoding: 'json',
    permissions: { customer_create: true },
    signingSecret: SECRET,
    paused: false,
    previousSigningSecret: null,
    previousSecretExpiresAt: null,
    failingSince: null,
    disabledAt: null,
    disabledReason: null,
    ordering: 'none',
    maxPerSecond: null,
    ...overrides,
  };
}

/** In-memory collaborators of one DeliveryService, recording what it asked of each. */
export class Fakes {
  event: PendingEvent | null | Error = pendingEvent();
  settings: AccountDeliverySettings | null = accountSettings();
  admission: Admission = { kind: 'admitted', lease: { endpointKey: 'https://receiver.example', id: 'lease-1', probe: false, maxPerSecond: null } };
  /** `hang`: the receiver never answers. */
  answer: OutboundResponse | Error | 'hang' = { status: 200, headers: {}, body: 'ok', truncated: false };
  applied = true;
  readonly recorded: Outcome[] = [];
  readonly released: { lease: EndpointLease; signal: string; error: string | null }[] = [];
  readonly requests: OutboundRequest[] = [];
  readonly added: { name: string; data: unknown; opts: { jobId?: string; delay?: number } }[] = [];
  readonly delayedTo: number[] = [];
  readonly forced: boolean[] = [];
  readonly health: { success: boolean }[] = [];
  /** What EndpointDisabling.disabled answers: null while the endpoint is enabled. */
  disabled: AccountDeliverySettings | null = null;
  /** What SubjectOrder.holdMs answers: null when no earlier event of the subject is pending. */
  heldMs: number | null = null;
  /** The events SubjectOrder.release was asked to release the next of. */
  readonly releasedAfter: string[] = [];
  /** The events SubjectOrder.startWorking was told of, and those whose work was then said to be over. */
  readonly working: string[] = [];
  readonly workedOver: string[] = [];
  /** While set, an ordered endpoint's load waits for it (a load that comes back late). */
  loadGate: Promise<void> | null = null;
  /** Seqs the re-read right before the call finds erased. */
  readonly erased = new Set<string>();

  service(schedule = '10s,1m'): DeliveryService {
    const environment = loadEnvironment({ RETRY_SCHEDULE: schedule, DELIVERY_TIMEOUT_MS: '1000', BREAKER_COOLDOWN: '30s' });
    const loader = {
      loadEvent: () => (this.event instanceof Error ? Promise.reject(this.event) : Promise.resolve(this.event)),
      loadOrderedEvent: async () => {
        await this.loadGate;
        if (this.event instanceof Error) throw this.event;
        return this.event && { event: this.event, ahead: undefined };
      },
    } as unknown as EventLoader;
    const store = {
      record: (outcome: Outcome) => {
        this.recorded.push(outcome);
        return Promise.resolve(this.applied);
      },
    } as unknown as OutcomeStore;
    const cache = { get: () => Promise.resolve(this.settings) } as unknown as AccountSettingsCache;
    const leases = {
      acquire: ({ force }: { force: boolean }) => {
        this.forced.push(force);
        return Promise.resolve(this.admission);
      },
      calls: new CallLimit(50),
      isLocallyFull: () => false,
      busyDelayMs: (_endpointKey: string, pace: { at: number } | null) => (pace ? pace.at - Date.now() : 150),
      indexChange: () => Promise.resolve(),
      release: (lease: EndpointLease, signal: string, error: string | null) => {
        this.released.push({ lease, signal, error });
        return Promise.resolve({ change: 'unchanged', consecutiveFailures: 0, retryAt: null });
      },
    } as unknown as EndpointAdmission;
    const guard = new AdmissionDoor(leases, environment);
    const http = {
      post: (request: OutboundRequest) => {
        this.requests.push(request);
        const answer = this.answer;
        if (answer === 'hang') return new Promise<never>(() => undefined);
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
      },
    };
    const queues = {
      addBulk: (steps: DeliveryJobData[], delays: number[]) => {
        steps.forEach((step, index) => this.added.push(deliveryJob(step, delays[index])));
        return Promise.resolve();
      },
    };
    const health = {
      disabled: () => Promise.resolve(this.disabled),
      noteOutcome: (_settings: AccountDeliverySettings, success: boolean) => {
        this.health.push({ success });
        return Promise.resolve();
      },
    } as unknown as EndpointDisabling;
    const order = {
      holdMs: () => Promise.resolve(this.heldMs),
      afterHold: () => Promise.resolve(),
      startWorking: (event: Pick<PendingEvent, 'seq'>) => {
        this.working.push(event.seq);
        return () => {
          this.workedOver.push(event.seq);
        };
      },
      release: (event: PendingEvent) => {
        this.releasedAfter.push(event.seq);
        return Promise.resolve();
      },
    } as unknown as SubjectOrder;
    const erasure = {
      beforeCall: ({ seq, erased }: PendingEvent) => (erased || this.erased.has(seq) ? Promise.reject(new ErasedEventError(seq)) : Promise.resolve()),
    } as unknown as ErasureCheck;
    return new DeliveryService(loader, cache, guard, http, new OutcomeRecorder(store, queues as never, environment, health), environment, health, order, erasure, { abandonInFlight: () => 0 } as never);
  }

  job(attempt = 0, series = 0): DeliveryJob {
    return {
      data: { eventSeq: '42', accountId: 7, series, attempt },
      attemptsStarted: 1,
      moveToDelayed: (timestamp: number) => {
        this.delayedTo.push(timestamp);
        return Promise.resolve();
      },
    };
  }
}
