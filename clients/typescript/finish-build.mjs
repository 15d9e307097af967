// After the two tsc builds (npm run build:client): marks dist/cjs as CommonJS inside this ESM package
// and makes the command line executable.
import { chmodSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
writeFileSync(here('./dist/cjs/package.json'), `${JSON.stringify({ type: 'commonjs' }, null, 2)}\n`);
chmodSync(here('./dist/cli.js'), 0o755);
