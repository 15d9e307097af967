import { createHistogram } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { serveIpc } from '../support/ipc';
import { bodyBuilder, type LoadPlan, type LoadResult } from './load-plan';

const now = (): number => performance.timeOrigin + performance.now();

/**
 * Runs one plan: keep-alive connections through undici, a fixed number of requests in flight or a
 * fixed start rate, latency in a histogram (microsecond resolution). For batch requests the answer
 * is read to count the accepted items; other answers are drained unread.
 */
async function run(plan: LoadPlan): Promise<LoadResult> {
  const agent = new Agent({ connections: plan.connections, keepAliveTimeout: 30_000, pipelining: 1 });
  const build = bodyBuilder(plan.body);
  const histogram = createHistogram();
  const statuses: Record<string, number> = {};
  const sendIds: string[] = [];
  const sendAt: number[] = [];
  const countAccepted = plan.body.kind === 'batch';
  const isDirectBot = plan.body.kind.startsWith('direct-');
  let requests = 0;
  let ok = 0;
  let accepted = 0;
  let errors = 0;
  let firstError: string | null = null;
  let sequence = 0;
  let timedOut = false;
  const startedAt = now();
  const hardDeadline = Date.now() + plan.deadlineMs;

  const one = async (): Promise<void> => {
    const n = sequence++;
    const built = build(n);
    const target = plan.targets[n % plan.targets.length] ?? '';
    const sentAt = now();
    if (plan.recordSends) {
      for (const id of built.ids) {
        sendIds.push(id);
        sendAt.push(sentAt);
      }
    }
    requests += 1;
    try {
      const response = await request(`${target}${plan.path}${built.query ? `?${built.query}` : ''}`, {
        method: 'POST',
        body: built.body,
        headers: { 'content-type': 'application/json', ...plan.headers },
        dispatcher: agent,
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
      });
      const status = String(response.statusCode);
      statuses[status] = (statuses[status] ?? 0) + 1;
      const success = response.statusCode >= 200 && response.statusCode < 300;
      if (countAccepted && success) {
        const answer = (await response.body.json()) as { results?: Array<{ status: string }> };
        accepted += (answer.results ?? []).filter((item) => item.status === 'accepted').length;
      } else if (success) {
        await response.body.dump();
        // 200 from /v1/events is "duplicate": stored before, not delivered again.
        if (!isDirectBot && (plan.body.kind !== 'event' || response.statusCode === 202)) accepted += 1;
      } else if (firstError === null) {
        firstError = `HTTP ${status}: ${(await response.body.text()).slice(0, 300)}`;
      } else {
        await response.body.dump();
      }
      if (success) ok += 1;
    } catch (error) {
      errors += 1;
      firstError ??= error instanceof Error ? error.message : String(error);
    }
    histogram.record(Math.max(1, Math.round((now() - sentAt) * 1000)));
  };

  const mode = plan.mode;
  if (mode.kind === 'concurrency') {
    const until = mode.durationMs === undefined ? Infinity : Date.now() + mode.durationMs;
    const total = mode.total ?? Infinity;
    await Promise.all(
      Array.from({ length: mode.inFlight }, async () => {
        while (sequence < total && Date.now() < until) {
          if (Date.now() > hardDeadline) {
            timedOut = true;
            return;
          }
          await one();
        }
      }),
    );
  } else {
    const inFlight = new Set<Promise<void>>();
    const started = performance.now();
    const count = Math.floor((mode.perSecond * mode.durationMs) / 1000);
    while (sequence < count) {
      const due = Math.min(count, Math.floor(((performance.now() - started) * mode.perSecond) / 1000));
      // Bounded: a service that stops answering cannot make the generator hold unbounded requests.
      while (sequence < due && inFlight.size < 5_000) {
        const pending = one().finally(() => inFlight.delete(pending));
        inFlight.add(pending);
      }
      if (Date.now() > hardDeadline) {
        timedOut = true;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.race([Promise.all(inFlight), new Promise((resolve) => setTimeout(resolve, Math.max(0, hardDeadline - Date.now())))]);
  }
  const elapsedMs = now() - startedAt;
  await agent.destroy();
  const ms = (value: number): number => value / 1000;
  return {
    requests,
    ok,
    accepted,
    statuses,
    errors,
    firstError,
    startedAt,
    elapsedMs,
    latency: {
      p50: ms(histogram.percentile(50)),
      p95: ms(histogram.percentile(95)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      mean: ms(histogram.mean),
    },
    sends: plan.recordSends ? { ids: sendIds, at: sendAt } : undefined,
    timedOut,
  };
}

serveIpc((type, payload) => (type === 'run' ? run(payload as LoadPlan) : Promise.reject(new Error(`unknown request ${type}`))));
process.send?.({ ready: true });
