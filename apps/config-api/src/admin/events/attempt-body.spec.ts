import { attemptRequestBody, type BodySource } from './attempt-body';

const event: BodySource = {
  eventId: 'evt-1',
  action: 'Customer_update',
  // As stored: the sender's key order and spelling, spliced in as is.
  messageText: '{"id":7,"name":"Zoë","cellphone":"[redacted]"}',
  createdAt: new Date('2026-01-02T03:04:05.000Z'),
  erased: false,
  publicUrl: 'https://callbacks.example',
};

describe('attemptRequestBody', () => {
  it('shows a body the attempt stored as stored (attempts from before the delivery model, or emptied by an erasure)', () => {
    expect(attemptRequestBody({ request_body: 'action=X&message[id]=1', encoding: null }, event)).toBe('action=X&message[id]=1');
    expect(attemptRequestBody({ request_body: '', encoding: 'json' }, event)).toBe('');
  });

  it('rebuilds the body from the message as it is stored now, in the encoding the attempt was sent with', () => {
    expect(attemptRequestBody({ request_body: null, encoding: 'json' }, event)).toBe(`{"action":"Customer_update","message":${event.messageText}}`);
    const form = attemptRequestBody({ request_body: null, encoding: 'form' }, event);
    expect(form.startsWith('action=Customer_update&')).toBe(true);
    expect(decodeURIComponent(form)).toContain('[redacted]');
    expect(JSON.parse(attemptRequestBody({ request_body: null, encoding: 'cloudevents' }, event))).toMatchObject({
      specversion: '1.0',
      id: 'evt-1',
      source: 'https://callbacks.example',
      type: 'Customer_update',
      time: '2026-01-02T03:04:05.000Z',
      data: { id: 7, name: 'Zoë', cellphone: '[redacted]' },
    });
  });

  it('shows no body for an erased event, even one an attempt recorded after the erasure did not store', () => {
    expect(attemptRequestBody({ request_body: null, encoding: 'json' }, { ...event, messageText: 'null', erased: true })).toBe('');
  });
});
