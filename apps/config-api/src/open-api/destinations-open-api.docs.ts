import { ApiProperty } from '@nestjs/swagger';
import { DestinationModel } from '../destinations/destinations.docs';
import { OkAnswer } from './open-api.docs';

export class DestinationAnswer extends OkAnswer {
  @ApiProperty({ type: DestinationModel })
  destination!: DestinationModel;
}

export class DestinationListAnswer extends OkAnswer {
  @ApiProperty({ type: [DestinationModel], description: 'The primary first, then the others in the order they were created.' })
  items!: DestinationModel[];
}
