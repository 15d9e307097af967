export * from './digest';
export * from './open-api.signature';
export * from './bot.signature';
export * from './webhook.signature';
