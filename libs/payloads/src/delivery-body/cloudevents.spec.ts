import { encodeCloudEvent } from './cloudevents';

describe('encodeCloudEvent', () => {
  const acceptedAt = new Date('2026-11-27T20:01:02.345Z');

  it('writes every CloudEvents 1.0 attribute CONTRACT §11 names, data being the message', () => {
    const text = encodeCloudEvent({ eventId: 'evt_1', action: 'Customer_create', message: '{"id":1,"tags":["vip"]}', acceptedAt, source: 'https://cb.example.com' });
    expect(JSON.parse(text)).toEqual({
      specversion: '1.0',
      id: 'evt_1',
      source: 'https://cb.example.com',
      type: 'Customer_create',
      time: '2026-11-27T20:01:02.345Z',
      datacontenttype: 'application/json',
      data: { id: 1, tags: ['vip'] },
    });
  });

  it('keeps the message bytes as stored (key order, number spelling)', () => {
    const text = encodeCloudEvent({ eventId: 'e', action: 'a', message: '{"b":1.50,"a":2}', acceptedAt, source: 'https://s' });
    expect(text.endsWith('"data":{"b":1.50,"a":2}}')).toBe(true);
  });

  it('escapes ids and actions that hold quotes', () => {
    const text = encodeCloudEvent({ eventId: 'e"1', action: 'a\\b', message: 'null', acceptedAt, source: 'https://s' });
    expect(JSON.parse(text)).toMatchObject({ id: 'e"1', type: 'a\\b', data: null });
  });
});
