export * from './bot-field.decorators';
export * from './bot-message.dto';
export * from './bot-answer.dto';
export * from './string-map.validator';
export * from './validate-bot-answer';
export * from './sample-bot-answers';
export * from './bot-webhook-bodies';
