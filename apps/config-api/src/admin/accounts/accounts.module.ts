import { Module } from '@nestjs/common';
import { DeliveryQueueModule } from '@app/runtime';
import { DestinationsModule } from '../../destinations/destinations.module';
import { AccountDeliveryOptionsController } from './account-delivery-options.controller';
import { AccountsController } from './accounts.controller';
import { AccountsService } from './accounts.service';
import { AccountCredentialsService } from './account-credentials.service';

@Module({
  imports: [DestinationsModule, DeliveryQueueModule.register('producer')],
  controllers: [AccountsController, AccountDeliveryOptionsController],
  providers: [AccountsService, AccountCredentialsService],
  exports: [AccountsService, AccountCredentialsService],
})
export class AccountsModule {}
