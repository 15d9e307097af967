export * from './actions';
export * from './admin-api.types';
export * from './events/validate-event-message';
export { plainTreeUnchanged } from './events/compiled-message-check';
export * from './events/event-message.constants';
export * from './bot';
export * from './account-id.decorator';
export * from './plain-object';
export * from './events/message-shape';
