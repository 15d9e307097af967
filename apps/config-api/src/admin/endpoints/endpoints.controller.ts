import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { AdminTokenGuard } from '@app/runtime';
import { ListEndpointsQueryDto } from './endpoints.dto';
import { type EndpointItem, EndpointsService } from './endpoints.service';

@Controller('admin/v1/endpoints')
@UseGuards(AdminTokenGuard)
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @Get()
  list(@Query() query: ListEndpointsQueryDto): Promise<{ items: EndpointItem[] }> {
    return this.endpoints.list(query);
  }
}
