import { checkDestinationBody, describeDestinationProblems, type StoredDestinationSettings } from './destination-body.validation';

const STORED: StoredDestinationSettings = {
  type: 'webhook',
  target: 'https://hooks.example.com/in',
  actions: null,
  filter: null,
  content_type: 'JSON',
  format: 'udesk',
  authType: 'header',
  ordering: 'none',
  max_per_second: null,
  retry: { scheduleMs: null, stopOn: [], disableOn: [] },
  expire_after_ms: null,
};

describe('checkDestinationBody', () => {
  it('keeps only the fields sent, with canonical values', async () => {
    expect(await checkDestinationBody({ type: 'webhook', target: ' https://hooks.example.com/in ', content_type: 'json', actions: ['Customer_create', 'Customer_create'] }, null, true)).toEqual({
      changes: { type: 'webhook', target: 'https://hooks.example.com/in', content_type: 'JSON', actions: ['Customer_create'] },
      problems: [],
    });
    expect(await checkDestinationBody({ max_per_second: 9, ordering: 'subject' }, STORED, true)).toEqual({ changes: { max_per_second: 9, ordering: 'subject' }, problems: [] });
  });

  it('names every wrong field at once', async () => {
    const check = await checkDestinationBody({ type: 'webhook', target: 'https://hooks.example.com/in', format: 'xml', ordering: 1, filter: { $where: 'x' } }, null, true);
    expect(check.changes).toBeNull();
    expect(describeDestinationProblems(check.problems)).toBe('filter: operator $where is not allowed; format: must be "udesk" or "cloudevents"; ordering: must be "none" or "subject"');
  });

  it('holds the rules that tie fields together against the stored settings', async () => {
    expect((await checkDestinationBody({ format: 'cloudevents', content_type: 'application/x-www-form-urlencoded' }, STORED, true)).problems).toEqual([
      { path: 'content_type', problem: 'must be "JSON" with format "cloudevents"' },
    ]);
    expect((await checkDestinationBody({ type: 'mqtt', target: 'mqtt://broker.example.com/t' }, STORED, true)).problems).toEqual([
      { path: 'auth', problem: 'is for webhooks only (brokers take credentials in the target URL)' },
    ]);
    expect(await checkDestinationBody({ type: 'mqtt', target: 'mqtt://broker.example.com/t', auth: null }, STORED, true)).toMatchObject({ problems: [] });
    expect((await checkDestinationBody({}, STORED, true)).problems[0].problem).toMatch(/^give at least one of/);
  });

  it.each([[null], [[]], ['webhook'], [7]])('refuses a body that is not an object: %j', async (body) => {
    expect((await checkDestinationBody(body, null, true)).changes).toBeNull();
  });
});
