import { validateEventMessage } from '@app/payloads';
import { verifyMessageTriggerRequest, verifyTaskPushRequest } from '@app/signing';
import { bodyBuilder } from './load-plan';

interface EventBody {
  account_id: number;
  action: 'Customer_create';
  event_id: string;
  message: Record<string, unknown>;
}

describe('bodyBuilder', () => {
  it('builds single events the ingest API accepts: valid message, tagged unique ids, accounts in turn', () => {
    const build = bodyBuilder({ kind: 'event', tag: 'sp', accounts: [7, 8] });
    const bodies = [0, 1, 2].map((n) => build(n));
    const parsed = bodies.map((built) => JSON.parse(built.body) as EventBody);
    expect(parsed.map((body) => body.account_id)).toEqual([7, 8, 7]);
    expect(parsed.map((body) => body.event_id)).toEqual(['sp-0', 'sp-1', 'sp-2']);
    expect(bodies.map((built) => built.ids)).toEqual([['sp-0'], ['sp-1'], ['sp-2']]);
    expect(validateEventMessage('Customer_create', parsed[0]?.message)).toEqual([]);
  });

  it('numbers batch items across batches, so no id repeats in a run', () => {
    const build = bodyBuilder({ kind: 'batch', tag: 'bt', accounts: [1], size: 3 });
    const first = JSON.parse(build(0).body) as { events: EventBody[] };
    const second = build(1);
    expect(first.events.map((event) => event.event_id)).toEqual(['bt-0', 'bt-1', 'bt-2']);
    expect(second.ids).toEqual(['bt-3', 'bt-4', 'bt-5']);
  });

  it('with subjects, builds valid Customer_update events whose customer ids cycle over that many', () => {
    const build = bodyBuilder({ kind: 'batch', tag: 'os', accounts: [4, 5], size: 3, subjects: 4 });
    const events = [0, 1].flatMap((n) => (JSON.parse(build(n).body) as { events: { account_id: number; action: string; message: { id: number } }[] }).events);
    expect(events.map((event) => event.message.id)).toEqual([1, 2, 3, 4, 1, 2]);
    expect(events.map((event) => event.account_id)).toEqual([4, 5, 4, 5, 4, 5]);
    expect(new Set(events.map((event) => event.action))).toEqual(new Set(['Customer_update']));
    expect(validateEventMessage('Customer_update', events[0]?.message)).toEqual([]);
  });

  it('signs direct bot calls so the webhook accepts them, and a wrong key is refused', () => {
    const trigger = bodyBuilder({ kind: 'direct-message-trigger', integrationName: 'bench', key: 'k1' })(5);
    const query = Object.fromEntries(new URLSearchParams(trigger.query));
    const triggerBody = JSON.parse(trigger.body) as Record<string, unknown>;
    expect(verifyMessageTriggerRequest({ query, body: triggerBody }, { key: 'k1', integrationName: 'bench' })).toEqual({ ok: true });
    expect(verifyMessageTriggerRequest({ query, body: triggerBody }, { key: 'k2', integrationName: 'bench' }).ok).toBe(false);

    const push = JSON.parse(bodyBuilder({ kind: 'direct-task-push', key: 'k1' })(9).body) as Record<string, unknown>;
    expect(verifyTaskPushRequest({ body: push }, { key: 'k1' })).toEqual({ ok: true });
    expect(verifyTaskPushRequest({ body: push }, { key: 'k2' }).ok).toBe(false);
  });
});
