import { mkdtempSync, rmSync, statSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCAL_SECRETS_KEY_FILE, localSecretsKey } from './local-secrets-key';
import { readSecretsKeys } from './secrets-keys';

describe('localSecretsKey (npm start without SECRETS_KEY)', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'local-secrets-key-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('generates a valid key once, readable by its owner only, and keeps it for later starts', () => {
    const first = localSecretsKey(root);
    expect(first.generated).toBe(true);
    const problems: string[] = [];
    expect(readSecretsKeys({ SECRETS_KEY: first.value }, true, problems).current?.key).toHaveLength(32);
    expect(problems).toEqual([]);
    const file = join(root, LOCAL_SECRETS_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.value);

    expect(localSecretsKey(root)).toEqual({ value: first.value, generated: false });
  });
});
