import { Module } from '@nestjs/common';
import { EndpointsController } from './endpoints.controller';
import { EndpointsService } from './endpoints.service';

@Module({ controllers: [EndpointsController], providers: [EndpointsService] })
export class EndpointsModule {}
