export * from './tracing';
export * from './tracing-settings';
export * from './request-span.interceptor';
