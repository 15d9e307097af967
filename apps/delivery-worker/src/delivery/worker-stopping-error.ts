/**
 * Thrown instead of starting a call once the worker is shutting down: the job fails without spending
 * an attempt, and its still-pending event is picked up again (stalled job recovery, the reconciler).
 */
export class WorkerStoppingError extends Error {
  constructor() {
    super('the worker is shutting down; the event stays pending and is delivered later');
    this.name = 'WorkerStoppingError';
  }
}
