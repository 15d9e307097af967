/**
 * The samples moved beside the DTOs (libs/payloads/src/events/sample-messages.ts); this re-export keeps
 * the delivery worker's form-encoder spec compiling until its own rewrite imports them from @app/payloads.
 */
export { SAMPLE_MESSAGES } from '@app/payloads';
