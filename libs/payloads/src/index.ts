export * from './actions';
export * from './events/validate-event-message';
export * from './events/event-message.constants';
export * from './bot';
export * from './account-id.decorator';
export * from './plain-object';
