import { activeTraceparent, callbackTraceHeaders, captureContext, inSpan, jobSpan, requestSpan, SharedStepSpans, traceCarrier, tracingOn } from './tracing';
import { readTracingSettings } from './tracing-settings';

describe('readTracingSettings', () => {
  it('is off without an endpoint and trims a trailing slash from one', () => {
    const problems: string[] = [];
    expect(readTracingSettings({}, problems)).toEqual({ otlpEndpoint: null, serviceName: null, callbackTraceparent: false });
    expect(readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/', OTEL_SERVICE_NAME: 'ingest-eu', CALLBACK_TRACEPARENT: 'true' }, problems)).toEqual({
      otlpEndpoint: 'http://collector:4318',
      serviceName: 'ingest-eu',
      callbackTraceparent: true,
    });
    expect(problems).toEqual([]);
  });

  it('names each bad setting', () => {
    const problems: string[] = [];
    readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317', CALLBACK_TRACEPARENT: 'sometimes' }, problems);
    readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }, problems);
    expect(problems).toEqual([
      'OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL (got protocol "grpc:")',
      'CALLBACK_TRACEPARENT must be true or false (got "sometimes")',
      'OTEL_EXPORTER_OTLP_ENDPOINT is not a valid URL',
    ]);
  });
});

describe('with tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  it('runs the work untouched and adds nothing to job data or callbacks', async () => {
    expect(tracingOn()).toBe(false);
    const headers = { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    await expect(requestSpan('POST /v1/events', headers, () => inSpan('ingest.store', () => traceCarrier()))).resolves.toEqual({});
    await expect(jobSpan({ eventSeq: '1', attempt: 0, traceparent: headers.traceparent }, () => Promise.resolve(activeTraceparent()))).resolves.toBeUndefined();
    expect(callbackTraceHeaders()).toEqual({});
    expect(captureContext()).toBeUndefined();
    const shared = new SharedStepSpans('ingest.enqueue', [captureContext()]);
    expect(shared.traceparent(0)).toBeUndefined();
    shared.end();
  });

  it('passes errors through', async () => {
    await expect(inSpan('ingest.store', () => Promise.reject(new Error('PostgreSQL away')))).rejects.toThrow('PostgreSQL away');
  });
});
