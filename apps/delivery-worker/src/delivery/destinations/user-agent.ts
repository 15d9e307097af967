import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { signWebhook } from '@app/signing';

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

/** The three Standard Webhooks values of one attempt (CONTRACT §5), over exactly the bytes sent. */
export function signatureHeaders(webhook: { id: string; timestampSeconds: number; secrets: readonly string[] }, body: string) {
  return signWebhook(webhook.secrets, webhook.id, webhook.timestampSeconds, body);
}
