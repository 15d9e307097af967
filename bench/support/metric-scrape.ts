/** An app's /metrics text (Prometheus exposition), or null when it does not answer. */
export async function metricsText(appUrl: string): Promise<string | null> {
  try {
    return await (await fetch(`${appUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  } catch {
    return null;
  }
}

/**
 * The value of the Prometheus sample whose name and labels are exactly `sample` (e.g.
 * `nodejs_heap_size_used_bytes` or `name{reason="busy"}`) on an app's /metrics; null when the app does
 * not answer or has no such sample yet.
 */
export async function metricSample(appUrl: string, sample: string): Promise<number | null> {
  const text = await metricsText(appUrl);
  const line = text?.split('\n').find((candidate) => candidate.startsWith(`${sample} `));
  return line ? Number(line.slice(sample.length + 1)) : null;
}

/**
 * The worker's count of jobs it took and put back without a call for `reason` (busy, paced,
 * held_by_subject, …). prom-client shows a labelled counter only once it was counted: no sample is zero.
 */
export async function jobsWithoutCall(workerUrl: string, reason: string): Promise<number> {
  return (await metricSample(workerUrl, `callback_delivery_jobs_without_call_total{reason="${reason}"}`)) ?? 0;
}
