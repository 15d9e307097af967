import { verifyWebhook } from '@app/signing';
import { type ReceivedRequest, TestReceiver } from '../support/receiver';

/** ok: 200 at once; error: 500; hang: no answer until well past the worker's DELIVERY_TIMEOUT_MS. */
export type ReceiverBehaviour = 'ok' | 'error' | 'hang';

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
      if (behaviour === 'error') {
        response.writeHead(500).end('drill: failing');
      } else if (behaviour === 'hang') {
        setTimeout(() => response.writeHead(200).end('too late'), this.hangMs).unref();
      } else {
        const id = String(request.headers['webhook-id']);
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
