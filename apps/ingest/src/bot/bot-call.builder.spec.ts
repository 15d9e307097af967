import { appendSignedQuery, buildMessageTriggerCall, buildTaskPushCall, REDACTED } from './bot-call.builder';

describe('bot call builder (fixed clock)', () => {
  it('signs a message trigger with the CONTRACT §6 vector and puts it in the query', () => {
    const target = { name: '对接一', key: '221b368d7f5f597867f525971f28ff75', url: 'https://bot.example.com/hook' };
    const call = buildMessageTriggerCall(target, { account_id: 1, integration_name: '对接一', regex: '^hi', questionContent: 'hi' }, 1496631984);
    expect(call.url).toBe('https://bot.example.com/hook?timestamp=1496631984&sign=96d8271cd705d3f134d215e9b3c27bb73f1132ed');
    expect(JSON.parse(call.body)).toEqual({ integrationName: '对接一', regex: '^hi', questionContent: 'hi' });
    expect(call.recordedBody).toBe(call.body);
  });

  it('passes extra and customerExtra on unchanged, and leaves out absent or null ones', () => {
    const target = { name: 'n', key: 'k', url: 'https://bot.example.com/' };
    const extra = { chatappOpenId: 'o-1', channel: 'app' };
    const withExtras = buildMessageTriggerCall(target, { account_id: 1, integration_name: 'n', regex: 'r', questionContent: 'q', extra, customerExtra: { customerId: 5 } }, 1);
    expect(JSON.parse(withExtras.body)).toEqual({ integrationName: 'n', regex: 'r', questionContent: 'q', extra, customerExtra: { customerId: 5 } });
    const nulls = buildMessageTriggerCall(target, { account_id: 1, integration_name: 'n', regex: 'r', questionContent: 'q', extra: null as never }, 1);
    expect(JSON.parse(nulls.body)).toEqual({ integrationName: 'n', regex: 'r', questionContent: 'q' });
  });

  it('signs a task push with the CONTRACT §6 vector in the body and redacts it for the log', () => {
    const target = { name: 'tasks', key: 'abcde', url: 'https://bot.example.com/task?x=1' };
    const call = buildTaskPushCall(target, { account_id: 1, integration_name: 'tasks', taskNodeId: 100, sessionId: 100, variables: { a: 'b' } }, 1551510709);
    expect(call.url).toBe('https://bot.example.com/task?x=1');
    expect(call.body).toBe('{"taskNodeId":100,"sessionId":100,"timestamp":1551510709,"sign":"9195e2a5c1d84b86dc59819f29a0e300","variables":{"a":"b"}}');
    expect(JSON.parse(call.recordedBody)).toEqual({ ...JSON.parse(call.body), sign: REDACTED });
    expect(call.recordedBody).not.toContain('9195e2a5c1d84b86dc59819f29a0e300');
  });

  it.each([
    ['https://h.example/p', 'https://h.example/p?timestamp=1&sign=s'],
    ['https://h.example', 'https://h.example/?timestamp=1&sign=s'],
    ['https://h.example/p?a=1', 'https://h.example/p?a=1&timestamp=1&sign=s'],
    ['https://h.example/p?a=%2F&b=x+y', 'https://h.example/p?a=%2F&b=x+y&timestamp=1&sign=s'],
    ['https://h.example/p?', 'https://h.example/p?timestamp=1&sign=s'],
    ['https://h.example/p?a=1&', 'https://h.example/p?a=1&timestamp=1&sign=s'],
    ['https://h.example/p?a=1#frag', 'https://h.example/p?a=1&timestamp=1&sign=s'],
  ])('appends the signed query to %s', (url, expected) => {
    expect(appendSignedQuery(url, 1, 's')).toBe(expected);
  });
});

