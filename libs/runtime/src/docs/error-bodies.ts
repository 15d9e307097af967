import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/*
 * The two error shapes of the service (CONTRACT §2, §3) as documentation models. They describe what
 * ApiError and OpenApiError (../http/api-error.ts) put on the wire; the api-docs e2e test compares them.
 */

export class ErrorDetailBody {
  @ApiProperty({ description: 'Path of the offending field, e.g. `message.cellphones[0].id` or `limit`.', example: 'message.id' })
  path!: string;

  @ApiProperty({ description: 'What is wrong with it.', example: 'is required' })
  problem!: string;
}

/** Admin and ingest errors: `{"error", "message", "details"?}`. */
export class ApiErrorBody {
  @ApiProperty({
    description: 'A short code word for the HTTP status: bad_request, unauthorized, not_found, conflict, payload_too_large, validation_failed, service_unavailable, bad_gateway, gateway_timeout, internal_error.',
    example: 'validation_failed',
  })
  error!: string;

  @ApiProperty({ description: 'What is wrong, for a human.', example: 'request body is invalid: message.id: is required' })
  message!: string;

  @ApiPropertyOptional({ type: [ErrorDetailBody], description: 'One entry per offending field (validation errors only).' })
  details?: ErrorDetailBody[];
}

export class OpenApiExceptionBody {
  @ApiProperty({ description: 'What is wrong, e.g. `param is missing or the value is empty: push_url`.', example: 'sorry you entered an incorrect value' })
  message!: string;
}

/** Open API errors: `{"code", "message", "exception": {"message"}}`. */
export class OpenApiErrorBody {
  @ApiProperty({ type: 'integer', description: 'Error code: 2059, 20621, 20622, 20623, 20624 or 2000 (see the table in the description).', example: 2000 })
  code!: number;

  @ApiProperty({ description: 'Short text for the code, e.g. `Authentication failed`, `Unknown error`.', example: 'Unknown error' })
  message!: string;

  @ApiProperty({ type: OpenApiExceptionBody })
  exception!: OpenApiExceptionBody;
}
