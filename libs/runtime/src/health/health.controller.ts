import { Controller, Get, HttpCode, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../docs/error-responses';
import { type ReadinessReport, ReadinessService } from './readiness.service';

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

  @ApiOperation({ summary: 'Readiness: PostgreSQL and Redis answer', description: 'For load balancers and orchestrators: route traffic here only on 200.' })
  @ApiOkResponse({
    description: 'Both answer.',
    schema: {
      type: 'object',
      properties: { status: { type: 'string', enum: ['ok'] }, checks: { type: 'object', properties: { postgres: { type: 'string' }, redis: { type: 'string' } } } },
      example: { status: 'ok', checks: { postgres: 'ok', redis: 'ok' } },
    },
  })
  @ApiErrorResponses([503, 'PostgreSQL or Redis does not answer.'])
  @Get('ready')
  async ready(): Promise<ReadinessReport> {
    const report = await this.readiness.check();
    if (report.status !== 'ok') throw new ServiceUnavailableException(report);
    return report;
  }
}
