import { QUEUE_TYPES, type QueueType } from './event-message.constants';
import {
  CompanyQueueValue,
  DurationSecondsField,
  IntegerField,
  OneOfField,
  StringField,
  ZonedTimestampField,
} from './field.decorators';

/** ShutQueue_create: the queue abandon record. Its ids are strings, unlike every other event's. */
export class ShutQueueCreateMessage {
  @StringField('required')
  id!: string;

  @StringField('required')
  customer_id!: string;

  @StringField()
  nick_name?: string;

  @StringField('required')
  @CompanyQueueValue()
  queue_name!: string;

  @OneOfField(QUEUE_TYPES, 'required')
  queue_type!: QueueType;

  @StringField('required')
  @CompanyQueueValue()
  queue_id!: string;

  @ZonedTimestampField()
  queue_start_time?: string;

  @ZonedTimestampField()
  queue_end_time?: string;

  @DurationSecondsField()
  queue_seconds?: string;

  @StringField()
  channel?: string;

  @IntegerField()
  im_web_plugin_id?: number;

  @StringField()
  menu_names?: string;
}
