import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { plainToInstance, Type } from 'class-transformer';
import { IsArray, IsDefined, IsIn, IsString, ValidateIf, ValidateNested, validateSync } from 'class-validator';
import { BotListField, BotOneOfField, BotStringField } from './bot-field.decorators';

class Item {
  @BotStringField('required')
  id!: string;
}

/** The decorator stacks the bot DTOs were written with before the composed fields replaced them. */
class Stacked {
  @ApiProperty({ type: 'integer', enum: [1, 2] })
  @IsDefined({ message: '$property is required' })
  @IsIn([1, 2], { message: '$property must be 1 or 2' })
  kind!: number;

  @ApiPropertyOptional({ type: 'string' })
  @ValidateIf((dto: Stacked, value: unknown) => dto.kind === 1 || (value !== undefined && value !== null))
  @IsDefined({ message: '$property is required when kind is 1' })
  @IsString({ message: '$property must be a string' })
  text?: string;

  @ApiProperty({ type: () => [Item] })
  @IsDefined({ message: '$property is required' })
  @IsArray({ message: '$property must be an array' })
  @ValidateNested({ each: true, message: '$property must be an object' })
  @Type(() => Item)
  items!: Item[];
}

class Composed {
  @BotOneOfField([1, 2], 'must be 1 or 2', 'required', { type: 'integer' })
  kind!: number;

  @BotStringField({ when: (dto: Composed) => dto.kind === 1, message: '$property is required when kind is 1' })
  text?: string;

  @BotListField(() => Item, 'required')
  items!: Item[];
}

/** Every problem as `property: constraint=message`, in the order class-validator reports them. */
function problems(dto: new () => object, value: Record<string, unknown>): string[] {
  const found: string[] = [];
  const walk = (errors: ReturnType<typeof validateSync>, prefix: string): void => {
    for (const error of errors) {
      for (const [name, text] of Object.entries(error.constraints ?? {})) found.push(`${prefix}${error.property}: ${name}=${text}`);
      walk(error.children ?? [], `${prefix}${error.property}.`);
    }
  };
  walk(validateSync(plainToInstance(dto, value)), '');
  return found;
}

describe('composed bot field decorators', () => {
  it.each([
    [{}],
    [{ kind: 3, text: 5, items: 'x' }],
    [{ kind: 1, items: [{}, { id: 7 }, 'x'] }],
    [{ kind: null, text: 'ok', items: null }],
  ])('report what the stacked decorators reported, in the same order: %j', (value) => {
    const expected = problems(Stacked, value);
    expect(expected.length).toBeGreaterThan(0);
    expect(problems(Composed, value)).toEqual(expected);
  });

  it.each([[{ kind: 1, text: 'hello', items: [{ id: 'a' }] }], [{ kind: 2, text: null, items: [] }]])('accept what the stacked decorators accepted: %j', (valid) => {
    expect(problems(Stacked, valid)).toEqual([]);
    expect(problems(Composed, valid)).toEqual([]);
  });
});
