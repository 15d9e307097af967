/** The command line's words: which command, its flags, and the credentials from flags or the environment. */

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const HELP = `event-callbacks: follow your account's events and forward them to a local URL

Usage:
  event-callbacks listen --forward <local url> [--since <event_id>] [--state <file>] [--secret whsec_…]
  event-callbacks replay <event_id> --forward <local url> [--secret whsec_…]
  event-callbacks --help

Commands:
  listen   Follow the account's pull feed from now (or after --since, or where --state left off) and
           POST every new event to the local URL in feed order, one at a time: JSON {"action","message"}
           with webhook-id, webhook-timestamp and, given a secret, webhook-signature. A receiver that is
           down or answers non-2xx gets the event again after 1 s, 2 s and 5 s. Ctrl+C stops.
  replay   Send one stored event of the account (found in the feed) to the local URL.

Flags:
  --forward <url>     The local receiver (http or https).
  --since <event_id>  listen: start after this event instead of now.
  --state <file>      listen: keep the place in this file; a later listen resumes from it.
  --secret <whsec_…>  Sign forwarded events (Standard Webhooks) with this secret.
  --interval <s>      listen: seconds between polls of an empty feed (default 2).
  --url <origin>      config-api's origin.
  --email <email>     The account's email.
  --token <token>     The account's Open API token.

Credentials may come from EVENT_CALLBACKS_URL, EVENT_CALLBACKS_EMAIL, EVENT_CALLBACKS_TOKEN and
EVENT_CALLBACKS_SECRET instead of the flags.

Exit status: 0 after Ctrl+C (or a replay that was answered 2xx), 1 when something else failed,
2 for a wrong or missing flag, 3 when the service refuses the credentials.
`;

export interface Connection {
  url: string;
  email: string;
  token: string;
}

export interface ListenCommand extends Connection {
  command: 'listen';
  forward: URL;
  since?: string;
  state?: string;
  secret?: string;
  intervalMs: number;
}

export interface ReplayCommand extends Connection {
  command: 'replay';
  eventId: string;
  forward: URL;
  secret?: string;
}

export type Command = { command: 'help' } | ListenCommand | ReplayCommand;

const VALUE_FLAGS: Record<'listen' | 'replay', readonly string[]> = {
  listen: ['forward', 'since', 'state', 'secret', 'interval', 'url', 'email', 'token'],
  replay: ['forward', 'secret', 'url', 'email', 'token'],
};

function httpUrl(text: string, flag: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${flag} must be an http(s) URL, not ${JSON.stringify(text)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`${flag} must be an http(s) URL, not ${JSON.stringify(text)}`);
  return url;
}

/** Reads argv (without node and the script) and the environment; throws UsageError naming the problem. */
export function parseArguments(argv: readonly string[], env: NodeJS.ProcessEnv): Command {
  if (argv.length === 0) throw new UsageError('a command is missing: listen or replay (event-callbacks --help lists them)');
  if (argv.includes('--help') || argv.includes('-h') || argv[0] === 'help') return { command: 'help' };
  const [command, ...rest] = argv;
  if (command !== 'listen' && command !== 'replay') throw new UsageError(`unknown command ${JSON.stringify(command)}: listen or replay (event-callbacks --help lists them)`);
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let index = 0; index < rest.length; index += 1) {
    const word = rest[index];
    if (!word.startsWith('--')) {
      positional.push(word);
      continue;
    }
    const [name, inline] = word.slice(2).split(/=(.*)/s, 2);
    if (!VALUE_FLAGS[command].includes(name)) throw new UsageError(`unknown flag --${name} for ${command} (event-callbacks --help lists them)`);
    const value = inline ?? rest[index + 1];
    if (inline === undefined) index += 1;
    if (value === undefined || value === '' || (inline === undefined && value.startsWith('--'))) throw new UsageError(`--${name} needs a value`);
    if (flags.has(name)) throw new UsageError(`--${name} is given twice`);
    flags.set(name, value);
  }
  const credential = (flag: string, variable: string): string => {
    const value = flags.get(flag) ?? env[variable];
    if (!value) throw new UsageError(`--${flag} (or ${variable}) is missing`);
    return value;
  };
  const url = httpUrl(credential('url', 'EVENT_CALLBACKS_URL'), '--url').origin;
  const connection: Connection = { url, email: credential('email', 'EVENT_CALLBACKS_EMAIL'), token: credential('token', 'EVENT_CALLBACKS_TOKEN') };
  const forwardText = flags.get('forward');
  if (!forwardText) throw new UsageError('--forward <local url> is missing');
  const forward = httpUrl(forwardText, '--forward');
  const secret = flags.get('secret') ?? (env.EVENT_CALLBACKS_SECRET || undefined);
  if (secret !== undefined && !/^whsec_[A-Za-z0-9+/]+=*$/.test(secret)) throw new UsageError('--secret must be whsec_ followed by base64');
  if (command === 'replay') {
    if (positional.length !== 1) throw new UsageError(positional.length === 0 ? 'replay needs the event id: event-callbacks replay <event_id> --forward <url>' : `unexpected words: ${positional.slice(1).join(' ')}`);
    return { command, ...connection, eventId: positional[0], forward, secret };
  }
  if (positional.length > 0) throw new UsageError(`unexpected words: ${positional.join(' ')}`);
  const interval = flags.get('interval') ?? '2';
  if (!/^[0-9]+(\.[0-9]+)?$/.test(interval) || Number(interval) < 0.2 || Number(interval) > 3600) throw new UsageError('--interval must be seconds from 0.2 to 3600');
  return { command, ...connection, forward, since: flags.get('since'), state: flags.get('state'), secret, intervalMs: Math.round(Number(interval) * 1000) };
}
