import { Webhook } from 'standardwebhooks';
import { ConfigApiModule } from '../../apps/config-api/src/config-api.module';
import { DeliveryWorkerModule } from '../../apps/delivery-worker/src/delivery-worker.module';
import { type RunningApp, startApp } from '../support/apps';
import { ADMIN_HEADERS, createAccount, setCallbackSettings, type TestAccount } from '../support/fixtures';
import { openApiCall } from '../support/open-api-client';
import { TestReceiver } from '../support/receiver';
import { SAMPLE_MESSAGES } from '@app/payloads';
import { waitFor } from '@app/testing';
import { useOwnRedisPrefix } from '../support/worker-process';

useOwnRedisPrefix('test-events');
jest.setTimeout(60_000);

/** Test events (CONTRACT §10): the example message, pushed like any event even with the permission off. */
describe('POST /open_api_v1/send_test_event', () => {
  let configApi: RunningApp;
  let worker: RunningApp;
  const receivers: TestReceiver[] = [];

  async function accountPushingTo(receiver: TestReceiver): Promise<TestAccount> {
    const account = await createAccount(configApi);
    // Every permission off: a test event must go anyway.
    await setCallbackSettings(configApi.app, account.id, { pushUrl: receiver.url, contentType: 'JSON', permissions: {} });
    return account;
  }

  async function eventView(eventId: string): Promise<Record<string, any>> { // eslint-disable-line @typescript-eslint/no-explicit-any
    const response = await fetch(`${configApi.url}/admin/v1/events/${encodeURIComponent(eventId)}`, { headers: ADMIN_HEADERS });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  }

  beforeAll(async () => {
    configApi = await startApp(ConfigApiModule);
    // The receiver answers from this (busy) process: a late answer must not become a time-out and a second attempt.
    worker = await startApp(DeliveryWorkerModule, { RETRY_SCHEDULE: '200ms,400ms', DELIVERY_TIMEOUT_MS: '10000', RECONCILE_INTERVAL: '1m' });
  });

  afterAll(async () => {
    await worker?.close();
    await configApi?.close();
    await Promise.all(receivers.map((receiver) => receiver.stop()));
  });

  it('pushes the example message, signed, with an event_id starting test_, although the permission is off', async () => {
    const receiver = await new TestReceiver().start();
    receivers.push(receiver);
    const account = await accountPushingTo(receiver);

    const answer = await openApiCall(configApi.url, account, 'POST', 'send_test_event', { body: { action: 'Customer_create' } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ code: 1000, message: 'OK', event_id: expect.stringMatching(/^test_[0-9a-f]{32}$/) });
    const eventId = answer.body.event_id as string;

    const request = await waitFor('the test event at the receiver', () => receiver.requests.find((candidate) => candidate.headers['webhook-id'] === eventId));
    expect(JSON.parse(request.body)).toEqual({ action: 'Customer_create', message: SAMPLE_MESSAGES.Customer_create });
    const headers = {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    expect(() => new Webhook(account.signing_secret).verify(request.body, headers)).not.toThrow();

    const logged = await waitFor('the test event logged as delivered', async () => {
      const view = await eventView(eventId);
      return view.status === 'delivered' ? view : false;
    });
    expect(logged).toMatchObject({ event_id: eventId, account_id: account.id, action: 'Customer_create', attempt_count: 1 });
    expect(logged.attempts).toEqual([expect.objectContaining({ attempt: 1, response_status: 200, request_body: request.body })]);
  });

  it('retries a test event the receiver refuses, like any event', async () => {
    const receiver = await new TestReceiver().start();
    receivers.push(receiver);
    receiver.respondStatus(500);
    const account = await accountPushingTo(receiver);
    const answer = await openApiCall(configApi.url, account, 'POST', 'send_test_event', { body: { action: 'ImSurveyVote_create' } });
    const eventId = answer.body.event_id as string;
    const failed = await waitFor('the test event to fail after its retries', async () => {
      const view = await eventView(eventId);
      return view.status === 'failed' ? view : false;
    });
    expect(receiver.requests.filter((request) => request.headers['webhook-id'] === eventId)).toHaveLength(3);
    expect(failed.attempts).toEqual(expect.arrayContaining([expect.objectContaining({ response_status: 500 })]));
  });

  it('refuses a missing or unknown action with code 2000 naming action', async () => {
    const account = await createAccount(configApi);
    for (const body of [{}, { action: 'Customer_delete' }, { action: 42 }]) {
      const answer = await openApiCall(configApi.url, account, 'POST', 'send_test_event', { body });
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: 2000, exception: { message: expect.stringMatching(/^action must be one of/) } });
    }
  });
});
