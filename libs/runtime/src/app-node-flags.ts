/**
 * The Node.js flags every app runs with, wherever it is started: the image sets them as NODE_OPTIONS
 * (Dockerfile, so docker-compose.yml and the Kubernetes manifests get them), `npm start` and the
 * `start:*` scripts pass them on the command line, and the bench starts the apps with them, so what it
 * measures is what is deployed. test/operations/app-node-flags.e2e-spec.ts keeps those places equal.
 *
 * `--max-semi-space-size=32` (MiB; Node 20's default is 16): ingest and the worker allocate a great deal
 * of short-lived objects per event (parsed bodies, rows, requests, promises), and a young generation
 * twice as large is scavenged half as often while holding about as many live objects each time. The
 * worker profiled on 20,000 deliveries spent 33 % less time in the garbage collector (693–775 → 493–512
 * ms); its peak RSS under a burst of 40,000 queued jobs went from 326 to 359 MB, well inside the
 * manifests' 512 Mi limit. 64 cut GC time by 45 % but raised that peak to 417 MB.
 */
export const APP_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
