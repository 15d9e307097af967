// @hey-api/openapi-ts (pinned in the root package.json) makes src/generated from ../openapi.json.
// `npm run clients` runs it; `npm run clients:check` runs it into a temporary folder (the two
// variables below) and compares. Nothing in src/generated is written by hand.
import { fileURLToPath } from 'node:url';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

export default {
  input: process.env.CLIENTS_OPENAPI_DOCUMENT ?? here('../openapi.json'),
  output: {
    path: process.env.CLIENTS_TYPESCRIPT_OUTPUT ?? here('./src/generated'),
    // Node's ESM needs the extension; the CommonJS build resolves it too.
    importFileExtension: '.js',
  },
  plugins: [
    '@hey-api/typescript',
    '@hey-api/client-fetch',
    {
      name: '@hey-api/sdk',
      // One class with a method per operation, named by operationId (set_url → setUrl); EventCallbacks extends it.
      operations: { strategy: 'single', containerName: 'OpenApiOperations', methods: 'instance' },
    },
  ],
};
