import { verifyWebhook } from '@app/signing';
import { type ReceivedRequest, TestReceiver } from '../support/receiver';

/**
 * ok: 200 at once; error: 500; hang: no answer until well past the worker's DELIVERY_TIMEOUT_MS;
 * flaky: one event in five (by its id) answered 500 on its first call, 200 on every later call: a
 * receiver that is up all along, but whose unlucky first calls in a row can open the breaker. A 500, not
 * a 503: a 503 asks the service to slow down (CONTRACT §9), and one in five of them holds an unpaced
 * endpoint near 40 calls a second (halved each second, climbing 25 a second), which this drill's
 * 400 events a second would outrun whatever the service did about loss and duplicates.
 */
export type ReceiverBehaviour = 'ok' | 'error' | 'hang' | 'flaky';

/** Whether a flaky receiver fails this event's first call: one id in five, the same ones whichever worker calls. */
function failsFirstCall(webhookId: string): boolean {
  let hash = 0;
  for (let index = 0; index < webhookId.length; index += 1) hash = (hash * 31 + webhookId.charCodeAt(index)) | 0;
  return Math.abs(hash) % 5 === 0;
}

/**
 * The API user's endpoint during a drill: a real server on loopback (the tests' TestReceiver) whose
 * behaviour can be switched, which checks every signature and counts successful deliveries per
 * `webhook-id` (a delivery = a call it answered 2xx; more than one for an id is a duplicate).
 */
export class DrillReceiver {
  /** 2xx answers per webhook-id. */
  readonly deliveries = new Map<string, number>();
  /** When each webhook-id was first answered 2xx, and every later 2xx answer of it (where duplicates come from). */
  readonly firstDeliveredAt = new Map<string, number>();
  readonly repeats: { id: string; firstAt: number; at: number }[] = [];
  calls = 0;
  badSignatures = 0;
  /** First calls a flaky receiver failed on purpose. */
  failedFirstCalls = 0;
  private readonly calledIds = new Set<string>();
  /** Calls that reached an event of a subject after a later event of that subject (ordering drills). */
  outOfOrder = 0;
  private subjects = 0;
  private readonly lastBySubject = new Map<number, number>();
  private behaviour: ReceiverBehaviour = 'ok';
  private secret = '';
  private readonly server = new TestReceiver();

  constructor(private readonly hangMs: number) {}

  get url(): string {
    return this.server.url;
  }

  behave(behaviour: ReceiverBehaviour): void {
    this.behaviour = behaviour;
  }

  get currentBehaviour(): ReceiverBehaviour {
    return this.behaviour;
  }

  /** Checks every call against the order of event numbers per subject (`n mod subjects`, as EventLoad's `subjects`). */
  checkOrder(subjects: number): void {
    this.subjects = subjects;
  }

  /** The account's signing secret; set before the first event is sent. */
  verifyWith(secret: string): void {
    this.secret = secret;
  }

  async start(): Promise<void> {
    this.server.respondWith((request, response) => {
      // The base receiver keeps every request; a 20,000-event drill needs only the counts.
      this.server.requests.length = 0;
      this.calls += 1;
      this.check(request);
      this.checkSubjectOrder(String(request.headers['webhook-id']));
      const behaviour = this.behaviour;
      const id = String(request.headers['webhook-id']);
      const firstCall = !this.calledIds.has(id);
      this.calledIds.add(id);
      if (behaviour === 'flaky' && firstCall && failsFirstCall(id)) {
        this.failedFirstCalls += 1;
        response.writeHead(500).end('drill: failing this first call');
      } else if (behaviour === 'error') {
        response.writeHead(500).end('drill: failing');
      } else if (behaviour === 'hang') {
        setTimeout(() => response.writeHead(200).end('too late'), this.hangMs).unref();
      } else {
        this.deliveries.set(id, (this.deliveries.get(id) ?? 0) + 1);
        const firstAt = this.firstDeliveredAt.get(id);
        if (firstAt === undefined) this.firstDeliveredAt.set(id, request.receivedAt);
        else this.repeats.push({ id, firstAt, at: request.receivedAt });
        response.writeHead(200).end('ok');
      }
    });
    await this.server.start();
  }

  async stop(): Promise<void> {
    await this.server.stop();
  }

  /** Distinct webhook-ids delivered so far. */
  get deliveredCount(): number {
    return this.deliveries.size;
  }

  private checkSubjectOrder(webhookId: string): void {
    if (this.subjects === 0) return;
    const number = Number(webhookId.slice(webhookId.lastIndexOf('-') + 1));
    const subject = number % this.subjects;
    if (number < (this.lastBySubject.get(subject) ?? -1)) this.outOfOrder += 1;
    this.lastBySubject.set(subject, Math.max(number, this.lastBySubject.get(subject) ?? -1));
  }

  private check(request: ReceivedRequest): void {
    const headers = request.headers as Record<string, string | string[] | undefined>;
    if (!this.secret || !verifyWebhook(headers, request.body, this.secret).ok) this.badSignatures += 1;
  }
}
