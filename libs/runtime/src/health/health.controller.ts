import { Controller, Get, HttpCode, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../docs/error-responses';
import { type ReadinessReport, ReadinessService } from './readiness.service';

/** `/health/ready`'s 503 answer: the usual `{error, message}` with the readiness report beside it. */
export interface NotReadyAnswer extends ReadinessReport {
  error: 'service_unavailable';
  message: string;
}

@ApiTags('Health and metrics')
@Controller('health')
export class HealthController {
  constructor(private readonly readiness: ReadinessService) {}

  @ApiOperation({ summary: 'Liveness: the process is up', description: 'Always 200 while the process runs; checks nothing else.' })
  @ApiOkResponse({ description: 'The process is up.', schema: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] } })
  @Get('live')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @ApiOperation({
    summary: 'Readiness: PostgreSQL and Redis answer, and SECRETS_KEY opens the stored secrets',
    description: 'For load balancers and orchestrators: route traffic here only on 200.',
  })
  @ApiOkResponse({
    description: 'Both answer, and the newest stored secrets open.',
    schema: {
      type: 'object',
      properties: {
        status: { type: 'string', enum: ['ok'] },
        checks: { type: 'object', properties: { postgres: { type: 'string' }, redis: { type: 'string' }, secrets: { type: 'string' } } },
      },
      example: { status: 'ok', checks: { postgres: 'ok', redis: 'ok', secrets: 'ok' } },
    },
  })
  @ApiErrorResponses([503, 'PostgreSQL or Redis does not answer, or SECRETS_KEY does not open the stored secrets; the body also carries `status` and `checks` saying which and why.'])
  @Get('ready')
  async ready(@Res({ passthrough: true }) response: Response): Promise<ReadinessReport | NotReadyAnswer> {
    const report = await this.readiness.check();
    if (report.status === 'ok') return report;
    // The error body every 503 has, plus the report: an operator reading it learns which check failed.
    response.status(503);
    const failing = Object.entries(report.checks).filter(([, outcome]) => outcome !== 'ok');
    return {
      error: 'service_unavailable',
      message: `not ready: ${failing.map(([name, outcome]) => `${name} ${outcome}`).join('; ')}`,
      ...report,
    };
  }
}
