import { IsEmail, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

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
  @Max(2_147_483_647)
  id?: number;
}
