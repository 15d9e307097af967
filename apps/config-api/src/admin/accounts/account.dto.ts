import { IsEmail, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { MAX_RECORD_ID } from '@app/payloads';

export class CreateAccountDto {
  @IsEmail({}, { message: 'email must be an e-mail address' })
  @MaxLength(320)
  email!: string;

  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;

  @IsOptional()
  @IsInt({ message: 'id must be an integer' })
  @Min(1)
  @Max(MAX_RECORD_ID)
  id?: number;
}
