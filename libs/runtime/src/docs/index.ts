export * from './api-docs';
export * from './error-bodies';
export * from './error-responses';
