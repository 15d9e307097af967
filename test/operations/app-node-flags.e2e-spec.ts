import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { APP_NODE_FLAGS } from '@app/runtime';

/**
 * The apps' Node.js flags are declared once (APP_NODE_FLAGS) and repeated where TypeScript cannot reach:
 * the image's NODE_OPTIONS and the `start:*` scripts. A flag changed in one place and not the others
 * would make the bench (which starts the apps with APP_NODE_FLAGS) measure something not deployed.
 * `npm start` is checked on its running apps in start-all-listen-host.e2e-spec.ts.
 */
const ROOT = join(__dirname, '..', '..');

it('the image runs every process with NODE_OPTIONS set to APP_NODE_FLAGS', () => {
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const runtimeStage = dockerfile.slice(dockerfile.indexOf('AS runtime'));
  const declared = [...runtimeStage.matchAll(/^ENV NODE_OPTIONS="([^"]*)"$/gm)].map((match) => match[1]);
  expect(declared).toEqual([APP_NODE_FLAGS.join(' ')]);
});

it('each start:* script runs its app with APP_NODE_FLAGS', () => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
  const appScripts = Object.entries(scripts).filter(([, command]) => /dist\/apps\/[^/]+\/src\/main\.js/.test(command));
  expect(appScripts.map(([name]) => name).sort()).toEqual(['start:config-api', 'start:ingest', 'start:worker']);
  for (const [, command] of appScripts) expect(command).toMatch(new RegExp(`^node ${APP_NODE_FLAGS.join(' ')} dist/apps/`));
});
