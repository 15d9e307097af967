/**
 * The Node.js flags every app runs with, wherever it is started: the image sets them as NODE_OPTIONS
 * (Dockerfile, so docker-compose.yml and the Kubernetes manifests get them), `npm start` and the
 * `start:*` scripts pass them on the command line, and the bench starts the apps with them, so what it
 * measures is what is deployed. test/operations/app-node-flags.e2e-spec.ts keeps those places equal.
 *
 * `--max-semi-space-size=32` (MiB; Node 20's default is 16): ingest and the worker allocate a great deal
 * of short-lived objects per event (parsed bodies, rows, requests, promises), and a young generation
 * twice as large is scavenged half as often while holding about as many live objects each time. Larger
 * still would keep a worker holding a burst of jobs too close to the manifests' 512 Mi limit.
 */
export const APP_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
