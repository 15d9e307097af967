export * from './actions';
export * from './events/validate-event-message';
