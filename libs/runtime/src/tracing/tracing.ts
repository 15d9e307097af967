import { type Context, context, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from './tracing-settings';

/**
 * OpenTelemetry for the three apps, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set. Off means no
 * provider at all: every helper below checks one variable and calls straight through, so an
 * untraced process pays a branch per span, nothing is allocated and job data gains no field.
 */
let tracer: Tracer | null = null;
let provider: NodeTracerProvider | null = null;
let callbackTraceparent = false;
const w3c = new W3CTraceContextPropagator();

/** Once per process, before the app is created; returns whether tracing is on. */
export function startTracing(appName: string, settings: TracingSettings): boolean {
  if (provider || settings.otlpEndpoint === null) return provider !== null;
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName ?? appName }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${settings.otlpEndpoint}/v1/traces` }))],
  });
  // The async context manager makes a span started in a request the parent of what that request awaits.
  provider.register({ propagator: w3c });
  tracer = provider.getTracer('event-callbacks');
  callbackTraceparent = settings.callbackTraceparent;
  return true;
}

/** Exports what is still buffered; part of the graceful close (bounded by the shutdown deadline). */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  provider = null;
  tracer = null;
  await stopping?.shutdown().catch(() => undefined);
}

export function tracingOn(): boolean {
  return tracer !== null;
}

type Attributes = Record<string, string | number | boolean>;

async function runInSpan<T>(span: Span, parent: Context, work: () => T | Promise<T>): Promise<T> {
  try {
    return await context.with(trace.setSpan(parent, span), work);
  } catch (error) {
    span.recordException(error as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
    throw error;
  } finally {
    span.end();
  }
}

/** A child of the active span (when there is one) around `work`, which may be synchronous. */
export async function inSpan<T>(name: string, work: () => T | Promise<T>, attributes?: Attributes): Promise<T> {
  if (!tracer) return work();
  return runInSpan(tracer.startSpan(name, { attributes }), context.active(), work);
}

type Headers = Record<string, string | string[] | undefined>;

/** A server span whose parent is the caller's W3C `traceparent` (and `tracestate`), when it sent one. */
export function requestSpan<T>(name: string, headers: Headers | undefined, work: () => Promise<T>, attributes?: Attributes): Promise<T> {
  if (!tracer) return work();
  const parent = headers ? w3c.extract(ROOT_CONTEXT, headers, defaultTextMapGetter) : ROOT_CONTEXT;
  return runInSpan(tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent), parent, work);
}

/** The active span as a W3C `traceparent` value, the carrier job data holds beside the ids. */
export function activeTraceparent(): string | undefined {
  if (!tracer) return undefined;
  const carrier: Record<string, string> = {};
  w3c.inject(context.active(), carrier, defaultTextMapSetter);
  return carrier.traceparent;
}

/** `{ traceparent }` to spread into job data, or nothing at all when tracing is off. */
export function traceCarrier(): { traceparent?: string } {
  const traceparent = activeTraceparent();
  return traceparent === undefined ? {} : { traceparent };
}

/**
 * The worker's span for one job (`delivery.take`), continuing the trace its `traceparent` names
 * (ingest's enqueue, or the attempt before a retry); the worker's admit, call and record steps run
 * inside it with inSpan().
 */
export function jobSpan<T>(job: { traceparent?: string; eventSeq: string; attempt: number }, work: () => Promise<T>): Promise<T> {
  if (!tracer) return work();
  const parent = job.traceparent ? w3c.extract(ROOT_CONTEXT, { traceparent: job.traceparent }, defaultTextMapGetter) : ROOT_CONTEXT;
  const span = tracer.startSpan('delivery.take', { kind: SpanKind.CONSUMER, attributes: { 'callback.event_seq': job.eventSeq, 'callback.attempt': job.attempt } }, parent);
  return runInSpan(span, parent, work);
}

/** Headers to add to a callback: `traceparent` of the active span when CALLBACK_TRACEPARENT is on. */
export function callbackTraceHeaders(): Record<string, string> {
  if (!callbackTraceparent) return {};
  const traceparent = activeTraceparent();
  return traceparent === undefined ? {} : { traceparent };
}

/**
 * Spans for work a group of requests shares (ingest's group commit: one INSERT, one queue add): one
 * span per member, each in its own request's trace, started now and ended together. `parents` are the
 * members' contexts captured by captureContext(); undefined members (tracing off) get no span.
 */
export class SharedStepSpans {
  private readonly spans: (Span | undefined)[];

  constructor(name: string, parents: readonly (Context | undefined)[]) {
    const active = tracer;
    this.spans = active ? parents.map((parent) => (parent ? active.startSpan(name, {}, parent) : undefined)) : [];
  }

  /** Member `index`'s span as a `traceparent`, for the job that member's event gets. */
  traceparent(index: number): string | undefined {
    const span = this.spans[index];
    if (!span) return undefined;
    const carrier: Record<string, string> = {};
    w3c.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, defaultTextMapSetter);
    return carrier.traceparent;
  }

  end(error?: unknown): void {
    for (const span of this.spans) {
      if (!span) continue;
      if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
      span.end();
    }
  }
}

/** The active context, kept by a request that hands its work to a shared step; undefined when tracing is off. */
export function captureContext(): Context | undefined {
  return tracer ? context.active() : undefined;
}
