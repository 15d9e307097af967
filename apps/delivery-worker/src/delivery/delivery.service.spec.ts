import { DelayedError } from 'bullmq';
import { Webhook } from 'standardwebhooks';
import { OutboundError } from '@app/runtime';
import { generateSigningSecret } from '@app/signing';
import { accountSettings, Fakes, pendingEvent, SECRET } from './delivery.service.fakes';

/** One delivery step's call: the body, the signature, the outcome and its retry (delivery-without-call.spec.ts: the steps that make none). */
describe('DeliveryService', () => {
  it('ends an event whose body cannot be encoded failed, saying why, without a call', async () => {
    const fakes = new Fakes();
    fakes.settings = accountSettings({ encoding: 'form' });
    fakes.event = pendingEvent({ messageText: '{"id":' });
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('failed');
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.recorded).toHaveLength(1);
    expect(fakes.recorded[0].attempt).toBeNull();
    expect(fakes.recorded[0].change).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(fakes.recorded[0].change.lastError).toMatch(/^cannot encode the callback body \(form\): /);
  });

  it('does nothing for a job whose step the row has left behind', async () => {
    for (const event of [null, pendingEvent({ status: 'delivered' }), pendingEvent({ series: 1 }), pendingEvent({ seriesAttempts: 1 })]) {
      const fakes = new Fakes();
      fakes.event = event;
      await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('stale');
      expect(fakes.requests).toHaveLength(0);
      expect(fakes.recorded).toHaveLength(0);
    }
  });

  it('records no_endpoint and filtered without calling anyone', async () => {
    const noUrl = new Fakes();
    noUrl.settings = accountSettings({ pushUrl: null });
    await expect(noUrl.service().deliver(noUrl.job(), 'token')).resolves.toBe('no_endpoint');
    expect(noUrl.recorded[0]).toMatchObject({ attempt: null, change: { status: 'no_endpoint', attempted: 0, seriesAttempts: 0 } });

    const off = new Fakes();
    off.settings = accountSettings({ permissions: { customer_create: false, customer_update: true } });
    await expect(off.service().deliver(off.job(), 'token')).resolves.toBe('filtered');
    expect(off.recorded[0].change).toMatchObject({ status: 'filtered', lastError: 'permission customer_create is off' });
    expect([...noUrl.requests, ...off.requests]).toHaveLength(0);
  });

  it('calls for a test event even when its permission is off, and still needs a push_url', async () => {
    const test = new Fakes();
    test.event = pendingEvent({ test: true });
    test.settings = accountSettings({ permissions: { customer_create: false } });
    await expect(test.service().deliver(test.job(), 'token')).resolves.toBe('delivered');
    expect(test.requests).toHaveLength(1);

    const noUrl = new Fakes();
    noUrl.event = pendingEvent({ test: true });
    noUrl.settings = accountSettings({ pushUrl: null });
    await expect(noUrl.service().deliver(noUrl.job(), 'token')).resolves.toBe('no_endpoint');
    expect(noUrl.requests).toHaveLength(0);
  });

  it('signs the exact bytes it sends and records them on success', async () => {
    const fakes = new Fakes();
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('delivered');
    const [request] = fakes.requests;
    expect(request.body).toBe('{"action":"Customer_create","message":{"id":1,"tags":["vip"]}}');
    expect(request.headers['webhook-id']).toBe('evt-42');
    expect(() => new Webhook(SECRET).verify(request.body, request.headers)).not.toThrow();
    expect(fakes.released).toEqual([{ lease: expect.objectContaining({ id: 'lease-1' }), signal: 'success', error: null }]);
    expect(fakes.recorded[0]).toMatchObject({
      attempt: { attempt: 1, requestBody: request.body, requestHeaders: request.headers, responseStatus: 200, error: null },
      change: { status: 'delivered', attempted: 1, lastError: null, nextAttemptAt: null },
    });
    expect(fakes.added).toHaveLength(0);
  });

  it('writes retrying with next_attempt_at, then enqueues the next step with the jittered delay', async () => {
    const fakes = new Fakes();
    fakes.answer = { status: 500, headers: {}, body: 'boom', truncated: false };
    const before = Date.now();
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('retrying');
    const after = Date.now();
    const { change } = fakes.recorded[0];
    expect(change).toMatchObject({ status: 'retrying', attempted: 1 });
    expect(change.lastError).toMatch(/^HTTP 500: server error \(retryable\); next attempt in \d+ ms$/);
    const [next] = fakes.added;
    expect(next.data).toEqual({ eventSeq: '42', accountId: 7, series: 0, attempt: 1 });
    expect(next.opts.jobId).toBe('e42-s0-a1');
    expect(next.opts.delay).toBeGreaterThanOrEqual(8500);
    expect(next.opts.delay).toBeLessThanOrEqual(11_500);
    // next_attempt_at is the job's delay from the moment the outcome was written, however long the test took.
    expect(change.nextAttemptAt?.getTime()).toBeGreaterThanOrEqual(before + (next.opts.delay ?? 0));
    expect(change.nextAttemptAt?.getTime()).toBeLessThanOrEqual(after + (next.opts.delay ?? 0));
    expect(fakes.released[0].signal).toBe('failure');
  });

  it('fails the event after the last scheduled attempt and enqueues nothing', async () => {
    const fakes = new Fakes();
    fakes.event = pendingEvent({ attempts: 2, seriesAttempts: 2, status: 'retrying' });
    fakes.answer = new OutboundError('timeout', 'no answer within 1000 ms');
    await expect(fakes.service().deliver(fakes.job(2), 'token')).resolves.toBe('failed');
    expect(fakes.recorded[0]).toMatchObject({
      attempt: { attempt: 3, responseStatus: null, error: 'time-out: no answer within 1000 ms' },
      change: { status: 'failed', lastError: 'time-out: no answer within 1000 ms (retryable); retries exhausted after 3 attempts' },
    });
    expect(fakes.added).toHaveLength(0);
  });

  it('does not schedule a retry when the row moved on while the call was made', async () => {
    const fakes = new Fakes();
    fakes.answer = { status: 502, headers: {}, body: '', truncated: false };
    fakes.applied = false;
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('superseded');
    expect(fakes.added).toHaveLength(0);
  });

  it('tells the endpoint health about calls made, but not about calls abandoned at shutdown', async () => {
    const ok = new Fakes();
    await ok.service().deliver(ok.job(), 'token');
    const failed = new Fakes();
    failed.answer = { status: 404, headers: {}, body: '', truncated: false };
    await failed.service().deliver(failed.job(), 'token');
    expect([...ok.health, ...failed.health]).toEqual([{ success: true }, { success: false }]);

    const stuck = new Fakes();
    const service = stuck.service();
    stuck.answer = 'hang';
    const delivering = service.deliver(stuck.job(), 'token');
    await new Promise((resolve) => setImmediate(resolve));
    expect(service.abandonInFlight()).toBe(1);
    await expect(delivering).resolves.toBe('retrying');
    expect(stuck.recorded[0].attempt?.error).toBe('connection failed: abandoned: the worker shut down before the receiver answered');
    expect(stuck.released[0].signal).toBe('neutral');
    expect(stuck.health).toHaveLength(0);
  });

  it('keeps the job for later when PostgreSQL is unavailable, and fails it on any other error', async () => {
    const away = new Fakes();
    away.event = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const before = Date.now();
    await expect(away.service().deliver(away.job(), 'token')).rejects.toBeInstanceOf(DelayedError);
    expect(away.delayedTo[0]).toBeGreaterThanOrEqual(before + 2500);

    const bug = new Fakes();
    bug.event = new Error('column "nope" does not exist');
    await expect(bug.service().deliver(bug.job(), 'token')).rejects.toThrow('column "nope" does not exist');
    expect(bug.delayedTo).toHaveLength(0);
  });

  it('frees the slot when signing breaks before the call, and ends the event failed saying why (CONTRACT §5)', async () => {
    const fakes = new Fakes();
    // A secret that cannot be used makes signing throw after the slot was taken.
    fakes.settings = accountSettings({ signingSecret: null as unknown as string });
    await expect(fakes.service().deliver(fakes.job(), 'token')).resolves.toBe('failed');
    expect(fakes.released).toEqual([{ lease: expect.objectContaining({ id: 'lease-1' }), signal: 'neutral', error: null }]);
    expect(fakes.requests).toHaveLength(0);
    expect(fakes.recorded).toHaveLength(1);
    expect(fakes.recorded[0].attempt).toBeNull();
    expect(fakes.recorded[0].change).toMatchObject({ status: 'failed', nextAttemptAt: null });
    expect(fakes.recorded[0].change.lastError).toMatch(/^cannot sign the callback: /);
  });

  it('signs with both secrets while the previous one has not expired', async () => {
    const previous = generateSigningSecret();
    const fakes = new Fakes();
    fakes.settings = accountSettings({ previousSigningSecret: previous, previousSecretExpiresAt: Date.now() + 60_000 });
    await fakes.service().deliver(fakes.job(), 'token');
    const [request] = fakes.requests;
    expect(request.headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(() => new Webhook(previous).verify(request.body, request.headers)).not.toThrow();

    const expired = new Fakes();
    expired.settings = accountSettings({ previousSigningSecret: previous, previousSecretExpiresAt: Date.now() - 1 });
    await expired.service().deliver(expired.job(), 'token');
    expect(expired.requests[0].headers['webhook-signature'].split(' ')).toHaveLength(1);
  });
});
