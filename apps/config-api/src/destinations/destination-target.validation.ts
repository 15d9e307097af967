import type { DestinationType } from '@app/payloads';
import { checkTargetUrl, MAX_TARGET_URL_LENGTH } from '@app/runtime';

/*
 * A destination's `target` by type (CONTRACT §11). Each answer is a problem (the text after the field
 * name) or null. Broker hosts are held to the same private-target rule as webhook URLs (§2): the check
 * runs on the host alone, so the same single text names no address whatever the reason.
 */

const SCHEMES: Record<DestinationType, readonly string[]> = {
  webhook: ['http:', 'https:'],
  rabbitmq: ['amqp:', 'amqps:'],
  nats: ['nats:'],
  mqtt: ['mqtt:', 'mqtts:'],
};

const SCHEME_PROBLEM: Record<DestinationType, string> = {
  webhook: 'must be an http(s):// URL',
  rabbitmq: 'must be amqp(s)://user:pass@host:port/vhost?exchange=X&routing_key=K',
  nats: 'must be nats://host:port/<subject>',
  mqtt: 'must be mqtt(s)://host:port/<topic>',
};

const RABBITMQ_PARAMETERS = ['exchange', 'routing_key'];
/** AMQP 0-9-1 short strings (exchange and routing key) hold at most 255 bytes. */
const AMQP_SHORT_STRING_BYTES = 255;

/** The host (and port) alone, through the webhook rule: literal addresses, names and what they resolve to. */
async function hostProblem(url: URL, allowPrivateTargets: boolean): Promise<string | null> {
  if (!url.hostname) return 'has no host';
  // Non-http schemes keep the host opaque (`127.1` stays `127.1`); the http form normalizes it as a socket would.
  let asHttp: string;
  try {
    asHttp = new URL(`http://${url.host}/`).toString();
  } catch {
    return 'has an invalid host';
  }
  return checkTargetUrl(asHttp, allowPrivateTargets);
}

function pathText(url: URL): string | null {
  try {
    return decodeURIComponent(url.pathname.replace(/^\//, ''));
  } catch {
    return null;
  }
}

function rabbitmqProblem(url: URL): string | null {
  for (const key of new Set(url.searchParams.keys())) {
    if (!RABBITMQ_PARAMETERS.includes(key)) return `has an unknown query parameter ${key.slice(0, 64)} (only exchange and routing_key)`;
  }
  for (const key of RABBITMQ_PARAMETERS) {
    const values = url.searchParams.getAll(key);
    if (values.length !== 1) return `must carry exactly one ${key} query parameter`;
    if (Buffer.byteLength(values[0], 'utf8') > AMQP_SHORT_STRING_BYTES) return `${key} must be at most ${AMQP_SHORT_STRING_BYTES} bytes`;
  }
  if (url.searchParams.get('exchange') === '') return 'exchange must name the exchange to publish to';
  if (url.pathname.replace(/^\//, '').includes('/')) return 'must have at most one path segment (the vhost)';
  return null;
}

function natsProblem(url: URL): string | null {
  if (url.search || url.hash) return 'must not carry a query or a fragment';
  const subject = pathText(url);
  if (!subject) return 'must name the subject as its path (nats://host:port/<subject>)';
  if (/[\s*>]/.test(subject)) return 'subject must not contain spaces or wildcards (* >)';
  if (subject.split('.').some((token) => token === '')) return 'subject must not have empty tokens (..)';
  return null;
}

function mqttProblem(url: URL): string | null {
  if (url.search || url.hash) return 'must not carry a query or a fragment';
  const topic = pathText(url);
  if (!topic) return 'must name the topic as its path (mqtt://host:port/<topic>)';
  if (/[+#]/.test(topic)) return 'topic must not contain wildcards (+ #)';
  if (Buffer.byteLength(topic, 'utf8') > 65_535) return 'topic is too long';
  return null;
}

/** The problem with `value` as the target of a destination of `type`, or null when it may be stored. */
export async function destinationTargetProblem(type: DestinationType, value: unknown, allowPrivateTargets: boolean): Promise<string | null> {
  if (typeof value !== 'string' || value.trim() === '') return 'must be a non-empty string (a URL)';
  if (value.length > MAX_TARGET_URL_LENGTH) return `must be at most ${MAX_TARGET_URL_LENGTH} characters long`;
  if (type === 'webhook') return checkTargetUrl(value, allowPrivateTargets);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `is not a valid URL: ${SCHEME_PROBLEM[type]}`;
  }
  if (!SCHEMES[type].includes(url.protocol)) return SCHEME_PROBLEM[type];
  // `#` starts a URL fragment, so the parsed topic would silently lose it.
  if (type === 'mqtt' && value.includes('#')) return 'topic must not contain wildcards (+ #)';
  const shapeProblem = type === 'rabbitmq' ? rabbitmqProblem(url) : type === 'nats' ? natsProblem(url) : mqttProblem(url);
  return shapeProblem ?? hostProblem(url, allowPrivateTargets);
}

/** The target as views show it: a password (or a NATS token, written as the user) reads `***`. */
export function shownTarget(type: DestinationType, target: string): string {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return '***';
  }
  if (url.password) url.password = '***';
  else if (type === 'nats' && url.username) url.username = '***';
  return url.toString();
}
