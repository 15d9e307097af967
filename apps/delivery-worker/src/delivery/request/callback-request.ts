import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { signWebhook } from '@app/signing';
import { encodeFormBody } from './form-encoder';

/** The nearest package.json of this project, found from here so it works from sources and from dist/. */
function projectVersion(): string {
  let directory = __dirname;
  for (let depth = 0; depth < 8; depth += 1) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'event-callbacks' && manifest.version) return manifest.version;
    } catch {
      // not here: keep walking up
    }
    const parent = dirname(directory);
    if (parent === directory) break;
    directory = parent;
  }
  return '0.0.0';
}

/** Receivers see who is calling and which release, e.g. `event-callbacks/0.1.0`. */
export const USER_AGENT = `event-callbacks/${projectVersion()}`;

export interface CallbackBody {
  contentType: 'application/json' | 'application/x-www-form-urlencoded';
  body: string;
}

/**
 * Serializes `{action, message}` once; these exact bytes are signed and sent. JSON bodies splice in the
 * stored message text as is, so key order and number spelling are the sender's, untouched by a parse.
 */
export function encodeCallbackBody(encoding: 'json' | 'form', action: string, messageText: string): CallbackBody {
  if (encoding === 'json') {
    return { contentType: 'application/json', body: `{"action":${JSON.stringify(action)},"message":${messageText}}` };
  }
  return { contentType: 'application/x-www-form-urlencoded', body: encodeFormBody(action, JSON.parse(messageText)) };
}

/** Every header of one attempt; none of them is secret, so the same map is stored with the attempt. */
export function callbackHeaders(
  callback: CallbackBody,
  webhook: { id: string; timestampSeconds: number; secrets: readonly string[] },
): Record<string, string> {
  return {
    'content-type': callback.contentType,
    'user-agent': USER_AGENT,
    ...signWebhook(webhook.secrets, webhook.id, webhook.timestampSeconds, callback.body),
  };
}
