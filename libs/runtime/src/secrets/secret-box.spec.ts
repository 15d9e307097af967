import { randomBytes } from 'node:crypto';
import { SecretBox, SecretBoxError, SecretsKeyMissingError, sealedKeyId } from './secret-box';
import { readSecretsKeys, type SecretsKey } from './secrets-keys';

function key(id: string): SecretsKey {
  return { id, key: randomBytes(32) };
}

describe('SecretBox', () => {
  const k1 = key('k1');
  const k2 = key('k2');

  it('seals with the current key and opens what it sealed', () => {
    const box = new SecretBox({ current: k1, previous: [] });
    const sealed = box.seal('whsec_c2VjcmV0');
    expect(sealed).not.toContain('whsec_c2VjcmV0');
    expect(sealedKeyId(sealed)).toBe('k1');
    expect(box.open(sealed)).toBe('whsec_c2VjcmV0');
  });

  it('uses a fresh IV per value, so equal secrets do not look equal at rest', () => {
    const box = new SecretBox({ current: k1, previous: [] });
    expect(box.seal('same')).not.toBe(box.seal('same'));
  });

  it('opens values sealed with a previous key and says they need re-sealing', () => {
    const sealedWithOld = new SecretBox({ current: k1, previous: [] }).seal('token-1');
    const rotated = new SecretBox({ current: k2, previous: [k1] });
    expect(rotated.open(sealedWithOld)).toBe('token-1');
    expect(rotated.needsResealing(sealedWithOld)).toBe(true);
    expect(rotated.needsResealing(rotated.seal('token-1'))).toBe(false);
  });

  it('returns a plaintext value from before encryption as it is, and marks it for sealing', () => {
    const box = new SecretBox({ current: k1, previous: [] });
    expect(box.open('legacy-plain-token')).toBe('legacy-plain-token');
    expect(box.needsResealing('legacy-plain-token')).toBe(true);
    expect(box.openNullable(null)).toBeNull();
  });

  it('refuses an unknown key id, another key with the same id and altered ciphertext, naming neither plaintext nor ciphertext', () => {
    const sealed = new SecretBox({ current: k1, previous: [] }).seal('the-plaintext');
    const body = sealed.split(':')[3];
    const attempts = [
      () => new SecretBox({ current: k2, previous: [] }).open(sealed),
      () => new SecretBox({ current: key('k1'), previous: [] }).open(sealed),
      () => new SecretBox({ current: k1, previous: [] }).open(`${sealed.slice(0, -2)}AA`),
      () => new SecretBox({ current: k1, previous: [] }).open('gcm1:k1:short:x'),
    ];
    for (const attempt of attempts) {
      let thrown: unknown;
      try {
        attempt();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(SecretBoxError);
      const message = (thrown as Error).message;
      expect(message).not.toContain('the-plaintext');
      expect(message).not.toContain(body);
    }
  });

  it('cannot be built without a current key', () => {
    expect(() => new SecretBox({ current: null, previous: [k1] })).toThrow(SecretsKeyMissingError);
  });
});

describe('readSecretsKeys', () => {
  const material = randomBytes(32).toString('base64');

  it('reads SECRETS_KEY and SECRETS_PREVIOUS_KEYS', () => {
    const problems: string[] = [];
    const other = randomBytes(32).toString('base64');
    const keys = readSecretsKeys({ SECRETS_KEY: `k2:${material}`, SECRETS_PREVIOUS_KEYS: ` k1:${other} ` }, true, problems);
    expect(problems).toEqual([]);
    expect(keys.current?.id).toBe('k2');
    expect(keys.current?.key.equals(Buffer.from(material, 'base64'))).toBe(true);
    expect(keys.previous.map((each) => each.id)).toEqual(['k1']);
  });

  it('requires SECRETS_KEY in production only', () => {
    const problems: string[] = [];
    expect(readSecretsKeys({}, false, problems).current).toBeNull();
    expect(problems).toEqual([]);
    readSecretsKeys({}, true, problems);
    expect(problems).toEqual([expect.stringContaining('SECRETS_KEY is required when NODE_ENV=production')]);
  });

  it.each([
    ['no key id', material, 'SECRETS_KEY must be <key id>:<base64 of 32 bytes>'],
    ['a short key', `k1:${randomBytes(16).toString('base64')}`, 'exactly 32 bytes'],
    ['not base64', 'k1:not base64!', 'exactly 32 bytes'],
  ])('names SECRETS_KEY and the problem for %s, without echoing the key', (_case, value, expected) => {
    const problems: string[] = [];
    readSecretsKeys({ SECRETS_KEY: value }, false, problems);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(expected);
    expect(problems[0]).not.toContain(value.slice(value.indexOf(':') + 1));
  });

  it('refuses a previous key id equal to the current one', () => {
    const problems: string[] = [];
    readSecretsKeys({ SECRETS_KEY: `k1:${material}`, SECRETS_PREVIOUS_KEYS: `k1:${randomBytes(32).toString('base64')}` }, false, problems);
    expect(problems).toEqual([expect.stringContaining('the key id "k1" is used twice')]);
  });
});
