import { parseArguments, UsageError } from './arguments';

const env = { EVENT_CALLBACKS_URL: 'https://callbacks.example.com/', EVENT_CALLBACKS_EMAIL: 'admin@example.com', EVENT_CALLBACKS_TOKEN: 'tok' };

describe('the command line words', () => {
  it('reads listen with credentials from the environment and flags in either form', () => {
    expect(parseArguments(['listen', '--forward=http://localhost:3000/cb', '--since', 'evt_1', '--state', 's.json', '--interval', '0.5'], env)).toEqual({
      command: 'listen',
      url: 'https://callbacks.example.com',
      email: 'admin@example.com',
      token: 'tok',
      forward: new URL('http://localhost:3000/cb'),
      since: 'evt_1',
      state: 's.json',
      secret: undefined,
      intervalMs: 500,
    });
  });

  it('prefers flags to the environment, and takes the secret from EVENT_CALLBACKS_SECRET', () => {
    const command = parseArguments(['replay', 'evt_9', '--forward', 'http://127.0.0.1:1/', '--email', 'b@example.com', '--url', 'http://127.0.0.1:3000'], {
      ...env,
      EVENT_CALLBACKS_SECRET: 'whsec_AAAA',
    });
    expect(command).toMatchObject({ command: 'replay', eventId: 'evt_9', email: 'b@example.com', url: 'http://127.0.0.1:3000', secret: 'whsec_AAAA' });
  });

  it.each([
    [[], 'a command is missing'],
    [['listen', '--forward'], '--forward needs a value'],
    [['listen', '--forward', 'http://a/', '--forward', 'http://b/'], '--forward is given twice'],
    [['listen', '--forward', 'http://a/', '--interval', 'soon'], '--interval must be seconds'],
    [['listen', '--forward', 'http://a/', 'extra'], 'unexpected words: extra'],
    [['replay', 'a', 'b', '--forward', 'http://a/'], 'unexpected words: b'],
    [['replay', 'evt_1', '--forward', 'http://a/', '--since', 'x'], 'unknown flag --since for replay'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseArguments(argv, env)).toThrow(UsageError);
    expect(() => parseArguments(argv, env)).toThrow(message);
  });

  it('answers help for --help anywhere, -h and help', () => {
    for (const argv of [['--help'], ['listen', '--help'], ['-h'], ['help']]) expect(parseArguments(argv, {})).toEqual({ command: 'help' });
  });
});
