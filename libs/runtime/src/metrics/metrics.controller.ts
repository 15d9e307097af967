import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { register } from 'prom-client';
import { startDefaultMetrics } from './metrics';

@ApiTags('Health and metrics')
@Controller('metrics')
export class MetricsController {
  constructor() {
    startDefaultMetrics();
  }

  @ApiOperation({ summary: 'Prometheus metrics of this process', description: 'Prometheus text exposition format; scrape every process.' })
  @ApiProduces(register.contentType)
  @ApiOkResponse({ description: 'The metrics.', content: { [register.contentType]: { schema: { type: 'string' } } } })
  @Get()
  @Header('Content-Type', register.contentType)
  async metrics(): Promise<string> {
    return register.metrics();
  }
}
