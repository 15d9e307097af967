import { redactFormText, redactJsonText, redactRequestBody, redactValue } from './redact';

const fields = new Set(['cellphone', 'email', 'cellphones']);

describe('redaction of stored copies', () => {
  it('replaces the value of every key of those names at any depth, whole containers included, and keeps the order of keys', () => {
    const message = { id: 1, cellphone: '138', im: { visitor: { email: 'a@b.c', name: 'x' } }, cellphones: [{ value: '139' }], list: [{ email: 'd@e.f' }, 3] };
    expect(redactValue(message, fields)).toEqual({
      id: 1,
      cellphone: '[redacted]',
      im: { visitor: { email: '[redacted]', name: 'x' } },
      cellphones: '[redacted]',
      list: [{ email: '[redacted]' }, 3],
    });
    expect(message.cellphone).toBe('138');
    expect(redactJsonText('{"z":1,"email":"x","a":2}', fields)).toBe('{"z":1,"email":"[redacted]","a":2}');
  });

  it('answers null when nothing changes or the text is not JSON', () => {
    expect(redactJsonText('{"id":1}', fields)).toBeNull();
    expect(redactJsonText('null', fields)).toBeNull();
    expect(redactJsonText('{"id":', fields)).toBeNull();
  });

  it('redacts callback bodies in either encoding', () => {
    expect(redactRequestBody('{"action":"Customer_create","message":{"cellphone":"138"}}', fields)).toBe('{"action":"Customer_create","message":{"cellphone":"[redacted]"}}');
    expect(redactFormText('action=Customer_create&message[id]=1&message[cellphones][0][value]=139&message[email]=a%40b.c', fields)).toBe(
      'action=Customer_create&message[id]=1&message[cellphones][0][value]=%5Bredacted%5D&message[email]=%5Bredacted%5D',
    );
    expect(redactRequestBody('action=Customer_create&message[id]=1', fields)).toBeNull();
  });
});
