import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { AdminAccessGuard } from '../identity/admin-access.guard';
import { Permission } from '../identity/permission.decorator';
import { ApiErrorResponses } from '@app/runtime/docs';
import { ListEndpointsQueryDto } from './endpoints.dto';
import type { EndpointItem } from '@app/payloads';
import { EndpointsService } from './endpoints.service';
import { ApiAdminController, ApiAdminOperation } from '../admin.docs';
import { TroubledEndpointListModel } from './endpoints.docs';

@ApiAdminController('Admin: queue and endpoints')
@Controller('admin/v1/endpoints')
@UseGuards(AdminAccessGuard)
export class EndpointsController {
  constructor(private readonly endpoints: EndpointsService) {}

  @ApiAdminOperation('Endpoints whose breaker is open or that are disabled', 200, TroubledEndpointListModel)
  @ApiErrorResponses(422)
  @Permission('read')
  @Get()
  list(@Query() query: ListEndpointsQueryDto): Promise<{ items: EndpointItem[] }> {
    return this.endpoints.list(query);
  }
}
