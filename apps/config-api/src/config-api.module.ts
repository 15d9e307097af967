import { Module } from '@nestjs/common';
import { PersistenceModule } from '@app/persistence';
import { DeliveryQueueModule, ObservabilityModule } from '@app/runtime';

/** The Open API (`/open_api_v1/*`) for API users and the admin API (`/admin/v1/*`) for operators. */
@Module({
  imports: [ObservabilityModule, PersistenceModule.forRoot('config-api'), DeliveryQueueModule.register('producer')],
})
export class ConfigApiModule {}
