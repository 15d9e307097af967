import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { DELIVERY_ORDERINGS, type DeliveryOptions, type DeliveryOptionsChange, type DeliveryOrdering, MAX_PER_SECOND_MAX, MAX_PER_SECOND_MIN } from '@app/payloads';
import { describeProblems, EITHER_OPTION, MAX_PER_SECOND_PROBLEM, NOTHING_SENT_PROBLEM, ORDERING_PROBLEM, UNKNOWN_OPTION_PROBLEM } from './delivery-options.validation';

/* Documentation of the delivery options (CONTRACT §9), shared by the Open API and the admin API. */

const ORDERING: ApiPropertyOptions = {
  enum: [...DELIVERY_ORDERINGS],
  description: '`subject`: events about one subject (a customer, organization, sub-session or conversation) are called one at a time, in the order ingest accepted them. Default `none`.',
  example: 'subject',
};

const MAX_PER_SECOND: ApiPropertyOptions = {
  type: 'integer',
  nullable: true,
  minimum: MAX_PER_SECOND_MIN,
  maximum: MAX_PER_SECOND_MAX,
  description: 'Calls to the endpoint started per second across all workers; null (the default): no pace but the concurrency caps.',
  example: 50,
};

/** The two options as read-only properties of an answer (push_settings, the account view). */
export const ApiOrderingProperty = (): PropertyDecorator => ApiProperty(ORDERING);
export const ApiMaxPerSecondProperty = (): PropertyDecorator => ApiProperty(MAX_PER_SECOND);

/** The body of set_delivery_options and of the admin PUT: at least one of the two; fields not sent keep their value. */
export class DeliveryOptionsBody implements DeliveryOptionsChange {
  @ApiProperty({ ...ORDERING, required: false })
  ordering?: DeliveryOrdering;

  @ApiProperty({ ...MAX_PER_SECOND, required: false })
  max_per_second?: number | null;
}

export class DeliveryOptionsModel implements DeliveryOptions {
  @ApiOrderingProperty()
  ordering!: DeliveryOrdering;

  @ApiMaxPerSecondProperty()
  max_per_second!: number | null;
}

/** The exception texts of set_delivery_options' code 2000 answers, as the Open API words them. */
export const SET_DELIVERY_OPTIONS_ERRORS = {
  nothingSent: `param is missing or the value is empty: ${EITHER_OPTION}`,
  ordering: describeProblems([{ path: 'ordering', problem: ORDERING_PROBLEM }]),
  maxPerSecond: describeProblems([{ path: 'max_per_second', problem: MAX_PER_SECOND_PROBLEM }]),
  unknownKey: describeProblems([{ path: 'max_per_sec', problem: UNKNOWN_OPTION_PROBLEM }]),
};

/** The admin API words the same problems as 422 details. */
export const ADMIN_DELIVERY_OPTIONS_PROBLEM = `A field is invalid (\`details\` names each: ordering ${ORDERING_PROBLEM}; max_per_second ${MAX_PER_SECOND_PROBLEM}; any other key ${UNKNOWN_OPTION_PROBLEM}; an empty body: ${NOTHING_SENT_PROBLEM}), or the path id is not an integer from 1 to 2147483647.`;
