import { getSchemaPath } from '@nestjs/swagger';
import { BotField, BotIntegerField, BotListField, BotOneOfField, BotStringField } from './bot-field.decorators';

/**
 * The seed's Message structures ("Bot webhook structures"), as class-validator DTOs.
 *
 * How strict (the seed gives types but says nothing about which nested fields are required):
 * - every field the seed lists must have its documented type when present; `null` counts as absent,
 *   because serializers such as Jackson write absent fields as null;
 * - required: `msgType`, `msgContent`, an option's `id` and `value`, the list of each structure
 *   (`optionList`, `productList`, `cardList`), a card's `type`, a suggested question's `id` and `content`;
 * - custom_card rules: a rich text card (type 1) needs `content`; a clickable one (type 1, isHit 1)
 *   needs `hitType` (1 or 2) and `hitContent`; a FAQ card (type 2) needs `suggestList`. Fields that are
 *   "not effective" for a card's type are allowed (and must still be well typed);
 * - `product_info.url` is an integer because the seed lists it so;
 * - fields the seed does not list are allowed and passed on unchanged.
 */
export const MSG_TYPES = ['plain', 'rich', 'selective_table', 'selective_list', 'show_product', 'selective_product', 'custom_card'] as const;
export type MsgType = (typeof MSG_TYPES)[number];

/** msgTypes whose msgContent is a string. */
export const TEXT_MSG_TYPES: readonly MsgType[] = ['plain', 'rich'];

export class BotOptionDto {
  @BotStringField('required')
  id!: string;

  @BotStringField('required')
  value!: string;
}

export class SelectiveTableDto {
  @BotStringField()
  title?: string;

  @BotIntegerField()
  rowNumber?: number;

  @BotIntegerField()
  columnNumber?: number;

  @BotListField(() => BotOptionDto, 'required')
  optionList!: BotOptionDto[];
}

export class SelectiveListDto {
  @BotStringField()
  title?: string;

  @BotListField(() => BotOptionDto, 'required')
  optionList!: BotOptionDto[];
}

export class ProductInfoDto {
  @BotStringField()
  info?: string;

  @BotStringField()
  boldFlag?: string;

  /** An integer: that is how the seed lists it for this interface. */
  @BotIntegerField()
  url?: number;

  @BotStringField()
  color?: string;
}

export class OptionalProductDto {
  @BotIntegerField()
  id?: number;

  @BotStringField()
  name?: string;

  @BotStringField()
  image?: string;

  @BotStringField()
  url?: string;

  @BotListField(() => ProductInfoDto)
  infoList?: ProductInfoDto[];
}

/** msgContent of show_product and selective_product. */
export class ShowProductDto {
  @BotStringField()
  title?: string;

  @BotIntegerField()
  showSize?: number;

  @BotIntegerField()
  turnFlag?: number;

  @BotListField(() => OptionalProductDto, 'required')
  productList!: OptionalProductDto[];
}

export class SuggestedQuestionDto {
  @BotIntegerField('required')
  id!: number;

  @BotStringField('required')
  content!: string;

  @BotIntegerField()
  type?: number;
}

/** hitType and hitContent are required on a clickable rich text card. */
const WHEN_CLICKABLE = {
  when: (card: CustomCardItemDto): boolean => card.type === 1 && card.isHit === 1,
  message: '$property is required when type is 1 and isHit is 1',
};

export class CustomCardItemDto {
  @BotIntegerField()
  id?: number;

  @BotOneOfField([1, 2], 'must be 1 (rich text card) or 2 (FAQ recommendation list card)', 'required', {
    type: 'integer',
    description: '1 rich text card, 2 FAQ recommendation list card.',
  })
  type!: number;

  @BotOneOfField([0, 1], 'must be 0 or 1', 'optional', { type: 'integer' })
  isHit?: number;

  @BotOneOfField([1, 2], 'must be 1 (hyperlink) or 2 (reply message)', WHEN_CLICKABLE, {
    type: 'integer',
    description: '1 hyperlink, 2 reply message. Required when type is 1 and isHit is 1.',
  })
  hitType?: number;

  @BotStringField(WHEN_CLICKABLE, { description: 'Required when type is 1 and isHit is 1.' })
  hitContent?: string;

  @BotStringField({ when: (card: CustomCardItemDto) => card.type === 1, message: '$property is required when type is 1' }, { description: 'Required when type is 1.' })
  content?: string;

  @BotStringField()
  suggestContent?: string;

  @BotListField(() => SuggestedQuestionDto, { when: (card: CustomCardItemDto) => card.type === 2, message: '$property is required when type is 2' }, {
    description: 'Required when type is 2.',
  })
  suggestList?: SuggestedQuestionDto[];
}

export class CustomCardDto {
  @BotIntegerField()
  id?: number;

  @BotStringField()
  name?: string;

  @BotOneOfField([0, 1], 'must be 0 or 1', 'optional', { type: 'integer' })
  turnFlag?: number;

  @BotIntegerField()
  showSize?: number;

  @BotStringField()
  title?: string;

  @BotListField(() => CustomCardItemDto, 'required')
  cardList!: CustomCardItemDto[];
}

/** The DTO that checks msgContent for each msgType whose content is an object. */
export const MSG_CONTENT_DTOS: Readonly<Record<Exclude<MsgType, 'plain' | 'rich'>, new () => object>> = {
  selective_table: SelectiveTableDto,
  selective_list: SelectiveListDto,
  show_product: ShowProductDto,
  selective_product: ShowProductDto,
  custom_card: CustomCardDto,
};

/**
 * The Message envelope. msgContent's shape depends on msgType, which class-validator cannot switch on
 * by itself, so `validateBotMessage` checks it with the DTO from MSG_CONTENT_DTOS.
 */
export class BotMessageDto {
  @BotOneOfField(MSG_TYPES, `must be one of ${MSG_TYPES.join(', ')}`, 'required')
  msgType!: MsgType;

  @BotField('required', {
    oneOf: [{ type: 'string' }, ...[SelectiveTableDto, SelectiveListDto, ShowProductDto, CustomCardDto].map((dto) => ({ $ref: getSchemaPath(dto) }))],
    description: 'A string for plain and rich; SelectiveTableDto, SelectiveListDto, ShowProductDto (show_product and selective_product) or CustomCardDto for the others.',
  })
  msgContent!: unknown;
}

export interface BotMessage {
  msgType: MsgType;
  msgContent: string | Record<string, unknown>;
}
