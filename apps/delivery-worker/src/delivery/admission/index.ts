/**
 * Admission: may this delivery call its endpoint now? One door (AdmissionDoor): `admit` answers
 * admitted (with a lease), wait (how long, no attempt spent) or open (the breaker: the delivery is held,
 * no call, no attempt; only the delivery sent as the probe passes the cooldown's end); `release` gives
 * the lease back with the call's outcome. Behind it: the breaker, the
 * endpoint's and the origin's concurrency, the fair share between workers, the pace and its 429/503
 * slow-down, and the hang detection. Nothing outside this folder reaches past the door.
 *
 * One word per idea:
 * - endpoint: one destination of one account (destinationEndpointKey): its breaker, leases and pace are its own;
 * - lease: the right to one call of an endpoint, counted against ENDPOINT_CONCURRENCY (and the origin's
 *   cap) in Redis, taken by `admit` and given back by `release`; a worker may keep a lease idle for a
 *   moment and reuse it for its next call there (within REUSE_WINDOW_MS);
 * - local leases: the leases this process holds of one endpoint (LocalLeases; ProcessLeases for all),
 *   and the jobs waiting here for one of them (waiting jobs);
 * - call: one of the process's WORKER_CONCURRENCY calls in flight (CallLimit); every lease in use
 *   comes with one, so one endpoint's waiting jobs never keep other endpoints' jobs from calling;
 * - share: the part of an endpoint's leases one worker may hold while other workers want it too (and
 *   of an origin's, one endpoint's while other endpoints wait there);
 * - pace: the endpoint's schedule of call starts (max_per_second, or a 429/503's slower pace);
 *   place: the start time in it that one waiting job owns (pace-schedule.ts);
 * - wait: the job goes back to the delayed set for that long, without an attempt: its place in the
 *   pace, behind the jobs already sent back for the endpoint's full leases (busy-delay.ts), or a
 *   half-open probe's verdict.
 *
 * Files: admission-door.ts (the door), endpoint-admission.ts (leases: local first, then Redis),
 * redis-leases.ts and lease-scripts.ts (Redis's side: the acquire and release scripts), pace-schedule.ts
 * (the pace's Lua), endpoint-keys.ts, local-leases.ts, process-leases.ts, call-limit.ts, busy-delay.ts,
 * endpoint-timing.ts (the bounds, each with its reason), open-breakers.ts, endpoint-disabling.ts.
 */
export { AdmissionDoor, type AdmitRequest, type BreakerChange, type CallOutcome, type Entry, type Lease, type WaitReason } from './admission-door';
export { disabledEndpointError, EndpointDisabling } from './endpoint-disabling';
export type { BreakerSignal } from './lease-scripts';
