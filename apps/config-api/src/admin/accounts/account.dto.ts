import { IsEmail, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MAX_RECORD_ID } from '@app/payloads';

export class CreateAccountDto {
  @ApiProperty({ format: 'email', maxLength: 320, example: 'admin@example.com' })
  @IsEmail({}, { message: 'email must be an e-mail address' })
  @MaxLength(320)
  email!: string;

  @ApiPropertyOptional({ maxLength: 200, example: 'Example Ltd' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_RECORD_ID, description: 'Your own id for the account; assigned when absent.' })
  @IsOptional()
  @IsInt({ message: 'id must be an integer' })
  @Min(1)
  @Max(MAX_RECORD_ID)
  id?: number;
}
