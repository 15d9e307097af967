import { Controller, Get, Header, Inject, NotFoundException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { register } from 'prom-client';
import { ENVIRONMENT } from '../config/config.module';
import type { Environment } from '../config/environment';
import { startDefaultMetrics } from './metrics';

@ApiTags('Health and metrics')
@Controller('metrics')
export class MetricsController {
  constructor(@Inject(ENVIRONMENT) private readonly environment: Environment) {
    startDefaultMetrics();
  }

  @ApiOperation({
    summary: 'Prometheus metrics of this process',
    description: 'Prometheus text exposition format; scrape every process. With METRICS_PORT set, served on that port only, and 404 here.',
  })
  @ApiProduces(register.contentType)
  @ApiOkResponse({ description: 'The metrics.', content: { [register.contentType]: { schema: { type: 'string' } } } })
  @Get()
  @Header('Content-Type', register.contentType)
  async metrics(): Promise<string> {
    if (this.environment.metricsPort !== null) throw new NotFoundException('metrics are served on METRICS_PORT');
    return register.metrics();
  }
}
