import { ChangesField, IntegerField } from './field.decorators';

/** Customer_update and Organization_update: `id` plus `changes` {attribute: [original, new]}. */
export class RecordUpdateMessage {
  @IntegerField('required')
  id!: number;

  @ChangesField('required')
  changes!: Record<string, [unknown, unknown]>;
}

/** Customer_destroy and Organization_destroy: only the id of what was deleted. */
export class RecordDestroyMessage {
  @IntegerField('required')
  id!: number;
}
