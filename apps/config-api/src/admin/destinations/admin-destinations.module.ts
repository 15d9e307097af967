import { Module } from '@nestjs/common';
import { DestinationsModule } from '../../destinations/destinations.module';
import { AdminDestinationsController } from './admin-destinations.controller';

/** The admin door to an account's destinations (CONTRACT §11), for operators and the console. */
@Module({
  imports: [DestinationsModule],
  controllers: [AdminDestinationsController],
})
export class AdminDestinationsModule {}
