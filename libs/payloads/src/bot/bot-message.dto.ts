import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsArray, IsDefined, IsIn, IsInt, IsOptional, IsString, ValidateIf, ValidateNested } from 'class-validator';

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

const REQUIRED = { message: '$property is required' };
const STRING = { message: '$property must be a string' };
const INTEGER = { message: '$property must be an integer' };
const ARRAY = { message: '$property must be an array' };
const EACH_OBJECT = { each: true, message: '$property must be an object' };
const ZERO_OR_ONE = { message: '$property must be 0 or 1' };

const present = (value: unknown): boolean => value !== undefined && value !== null;

export class BotOptionDto {
  @ApiProperty({ type: 'string' })
  @IsDefined(REQUIRED)
  @IsString(STRING)
  id!: string;

  @ApiProperty({ type: 'string' })
  @IsDefined(REQUIRED)
  @IsString(STRING)
  value!: string;
}

export class SelectiveTableDto {
  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  title?: string;

  @ApiPropertyOptional({ type: 'integer' })
  @IsOptional()
  @IsInt(INTEGER)
  rowNumber?: number;

  @ApiPropertyOptional({ type: 'integer' })
  @IsOptional()
  @IsInt(INTEGER)
  columnNumber?: number;

  @ApiProperty({ type: () => [BotOptionDto] })
  @IsDefined(REQUIRED)
  @IsArray(ARRAY)
  @ValidateNested(EACH_OBJECT)
  @Type(() => BotOptionDto)
  optionList!: BotOptionDto[];
}

export class SelectiveListDto {
  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  title?: string;

  @ApiProperty({ type: () => [BotOptionDto] })
  @IsDefined(REQUIRED)
  @IsArray(ARRAY)
  @ValidateNested(EACH_OBJECT)
  @Type(() => BotOptionDto)
  optionList!: BotOptionDto[];
}

export class ProductInfoDto {
  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  info?: string;

  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  boldFlag?: string;

  /** An integer: that is how the seed lists it for this interface. */
  @ApiPropertyOptional({ type: 'integer' })
  @IsOptional()
  @IsInt(INTEGER)
  url?: number;

  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  color?: string;
}

export class OptionalProductDto {
  @ApiPropertyOptional({ type: 'integer' })
  @IsOptional()
  @IsInt(INTEGER)
  id?: number;

  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  name?: string;

  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  image?: string;

  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  url?: string;

  @ApiPropertyOptional({ type: () => [ProductInfoDto] })
  @IsOptional()
  @IsArray(ARRAY)
  @ValidateNested(EACH_OBJECT)
  @Type(() => ProductInfoDto)
  infoList?: ProductInfoDto[];
}

/** msgContent of show_product and selective_product. */
export class ShowProductDto {
  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  title?: string;

  @ApiPropertyOptional({ type: 'integer' })
  @IsOptional()
  @IsInt(INTEGER)
  showSize?: number;

  @ApiPropertyOptional({ type: 'integer' })
  @IsOptional()
  @IsInt(INTEGER)
  turnFlag?: number;

  @ApiProperty({ type: () => [OptionalProductDto] })
  @IsDefined(REQUIRED)
  @IsArray(ARRAY)
  @ValidateNested(EACH_OBJECT)
  @Type(() => OptionalProductDto)
  productList!: OptionalProductDto[];
}

export class SuggestedQuestionDto {
  @ApiProperty({ type: 'integer' })
  @IsDefined(REQUIRED)
  @IsInt(INTEGER)
  id!: number;

  @ApiProperty({ type: 'string' })
  @IsDefined(REQUIRED)
  @IsString(STRING)
  content!: string;

  @ApiPropertyOptional({ type: 'integer' })
  @IsOptional()
  @IsInt(INTEGER)
  type?: number;
}

const isClickable = (card: CustomCardItemDto): boolean => card.type === 1 && card.isHit === 1;

export class CustomCardItemDto {
  @ApiPropertyOptional({ type: 'integer' })
  @IsOptional()
  @IsInt(INTEGER)
  id?: number;

  @ApiProperty({ type: 'integer', enum: [1, 2], description: '1 rich text card, 2 FAQ recommendation list card.' })
  @IsDefined(REQUIRED)
  @IsIn([1, 2], { message: '$property must be 1 (rich text card) or 2 (FAQ recommendation list card)' })
  type!: number;

  @ApiPropertyOptional({ type: 'integer', enum: [0, 1] })
  @IsOptional()
  @IsIn([0, 1], ZERO_OR_ONE)
  isHit?: number;

  @ApiPropertyOptional({ type: 'integer', enum: [1, 2], description: '1 hyperlink, 2 reply message. Required when type is 1 and isHit is 1.' })
  @ValidateIf((card: CustomCardItemDto) => isClickable(card) || present(card.hitType))
  @IsDefined({ message: '$property is required when type is 1 and isHit is 1' })
  @IsIn([1, 2], { message: '$property must be 1 (hyperlink) or 2 (reply message)' })
  hitType?: number;

  @ApiPropertyOptional({ type: 'string', description: 'Required when type is 1 and isHit is 1.' })
  @ValidateIf((card: CustomCardItemDto) => isClickable(card) || present(card.hitContent))
  @IsDefined({ message: '$property is required when type is 1 and isHit is 1' })
  @IsString(STRING)
  hitContent?: string;

  @ApiPropertyOptional({ type: 'string', description: 'Required when type is 1.' })
  @ValidateIf((card: CustomCardItemDto) => card.type === 1 || present(card.content))
  @IsDefined({ message: '$property is required when type is 1' })
  @IsString(STRING)
  content?: string;

  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  suggestContent?: string;

  @ApiPropertyOptional({ type: () => [SuggestedQuestionDto], description: 'Required when type is 2.' })
  @ValidateIf((card: CustomCardItemDto) => card.type === 2 || present(card.suggestList))
  @IsDefined({ message: '$property is required when type is 2' })
  @IsArray(ARRAY)
  @ValidateNested(EACH_OBJECT)
  @Type(() => SuggestedQuestionDto)
  suggestList?: SuggestedQuestionDto[];
}

export class CustomCardDto {
  @ApiPropertyOptional({ type: 'integer' })
  @IsOptional()
  @IsInt(INTEGER)
  id?: number;

  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  name?: string;

  @ApiPropertyOptional({ type: 'integer', enum: [0, 1] })
  @IsOptional()
  @IsIn([0, 1], ZERO_OR_ONE)
  turnFlag?: number;

  @ApiPropertyOptional({ type: 'integer' })
  @IsOptional()
  @IsInt(INTEGER)
  showSize?: number;

  @ApiPropertyOptional({ type: 'string' })
  @IsOptional()
  @IsString(STRING)
  title?: string;

  @ApiProperty({ type: () => [CustomCardItemDto] })
  @IsDefined(REQUIRED)
  @IsArray(ARRAY)
  @ValidateNested(EACH_OBJECT)
  @Type(() => CustomCardItemDto)
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
  @ApiProperty({ enum: MSG_TYPES })
  @IsDefined(REQUIRED)
  @IsIn(MSG_TYPES, { message: `$property must be one of ${MSG_TYPES.join(', ')}` })
  msgType!: MsgType;

  @ApiProperty({
    oneOf: [{ type: 'string' }, ...[SelectiveTableDto, SelectiveListDto, ShowProductDto, CustomCardDto].map((dto) => ({ $ref: getSchemaPath(dto) }))],
    description: 'A string for plain and rich; SelectiveTableDto, SelectiveListDto, ShowProductDto (show_product and selective_product) or CustomCardDto for the others.',
  })
  @IsDefined(REQUIRED)
  msgContent!: unknown;
}

export interface BotMessage {
  msgType: MsgType;
  msgContent: string | Record<string, unknown>;
}
