export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL (spans go to `<it>/v1/traces`); null: tracing off. */
  otlpEndpoint: string | null;
  /** OTEL_SERVICE_NAME: null names each process after its app. */
  serviceName: string | null;
  /** CALLBACK_TRACEPARENT: a `traceparent` header on every callback (only while tracing is on). */
  callbackTraceparent: boolean;
}

type Source = Record<string, string | undefined>;

function raw(source: Source, name: string): string | null {
  const value = source[name]?.trim();
  return value ? value : null;
}

/** Read beside the other settings (loadEnvironment), with the same one-message-per-problem reporting. */
export function readTracingSettings(source: Source, problems: string[]): TracingSettings {
  let otlpEndpoint = raw(source, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (otlpEndpoint !== null) {
    try {
      const { protocol } = new URL(otlpEndpoint);
      if (protocol !== 'http:' && protocol !== 'https:') {
        problems.push(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL (got protocol "${protocol}")`);
      }
    } catch {
      problems.push('OTEL_EXPORTER_OTLP_ENDPOINT is not a valid URL');
    }
    otlpEndpoint = otlpEndpoint.replace(/\/+$/, '');
  }
  const flag = raw(source, 'CALLBACK_TRACEPARENT')?.toLowerCase() ?? 'false';
  if (!['true', '1', 'yes', 'false', '0', 'no'].includes(flag)) problems.push(`CALLBACK_TRACEPARENT must be true or false (got "${flag}")`);
  return { otlpEndpoint, serviceName: raw(source, 'OTEL_SERVICE_NAME'), callbackTraceparent: ['true', '1', 'yes'].includes(flag) };
}
