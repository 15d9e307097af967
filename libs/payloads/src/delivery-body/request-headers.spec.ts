import { headersToStore, sentHeaders } from './request-headers';

describe('request headers as attempts keep them', () => {
  const startedAt = new Date('2026-11-30T09:00:01.999Z');
  const sent = {
    'content-type': 'application/cloudevents+json',
    'user-agent': 'event-callbacks/1.2.3',
    'webhook-id': 'evt-1',
    'webhook-timestamp': String(Math.floor(startedAt.getTime() / 1000)),
    'webhook-signature': 'v1,abc=',
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  };

  it('stores what the row and the event cannot give back, and rebuilds the rest in the order sent', () => {
    const stored = headersToStore(sent, { contentType: sent['content-type'], eventId: 'evt-1', startedAt });
    expect(stored).toEqual({ 'user-agent': 'event-callbacks/1.2.3', 'webhook-signature': 'v1,abc=', traceparent: sent.traceparent });
    const shown = sentHeaders(stored, { encoding: 'cloudevents', startedAt }, 'evt-1');
    expect(JSON.stringify(shown)).toBe(JSON.stringify(sent));
  });

  it('keeps headers whole when they are not what the facts give back', () => {
    for (const facts of [
      { contentType: 'application/json', eventId: 'evt-1', startedAt },
      { contentType: sent['content-type'], eventId: 'evt-2', startedAt },
      { contentType: sent['content-type'], eventId: 'evt-1', startedAt: new Date(startedAt.getTime() + 1) },
    ]) {
      expect(headersToStore(sent, facts)).toBe(sent);
    }
    const { 'user-agent': userAgent, ...others } = sent;
    const reordered = { 'user-agent': userAgent, ...others };
    expect(headersToStore(reordered, { contentType: sent['content-type'], eventId: 'evt-1', startedAt })).toBe(reordered);
  });

  it('shows whole stored headers, and those of attempts without an encoding, as stored', () => {
    expect(sentHeaders(sent, { encoding: 'json', startedAt }, 'other')).toBe(sent);
    const partial = { 'webhook-signature': 'v1,abc=' };
    expect(sentHeaders(partial, { encoding: null, startedAt }, 'evt-1')).toBe(partial);
  });
});
