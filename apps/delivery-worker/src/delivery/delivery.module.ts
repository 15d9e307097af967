import { Module } from '@nestjs/common';
import { DeliveryQueueModule, ENVIRONMENT, type Environment, OutboundHttpClient } from '@app/runtime';
import { AdmissionDoor } from './admission/admission-door';
import { EndpointAdmission } from './admission/endpoint-admission';
import { EndpointDisabling } from './admission/endpoint-disabling';
import { DestinationSettingsCache } from './destinations/destination-settings.cache';
import { DeliveryPipeline } from './delivery-pipeline.service';
import { DeliveryProcessor } from './delivery.processor';
import { DeliveryRunner } from './delivery-runner.service';
import { EndpointGauges } from './endpoint-gauges';
import { ErasureCheck } from './erasure-check';
import { HeldFeeder } from './holding/held-feeder.service';
import { OperationalEventsService } from './holding/operational-events.service';
import { DeliveryLoader } from './loading/delivery-loader';
import { SubjectOrder } from './ordering/subject-order';
import { OutcomeRecorder } from './outcome/outcome-recorder.service';
import { OutcomeStore } from './outcome/outcome-store';
import { Reconciler } from './reconciler.service';
import { DELIVERY_HTTP_CLIENT, DeliverySender } from './destinations/delivery-sender';

/** One delivery pipeline for every destination, its admission, its record, and what finds deliveries without a job. */
@Module({
  imports: [DeliveryQueueModule.register('consumer')],
  providers: [
    {
      provide: DELIVERY_HTTP_CLIENT,
      inject: [ENVIRONMENT],
      // One keep-alive pool per origin, as large as the origin's cap (several accounts' endpoints may share it).
      useFactory: (environment: Environment) =>
        new OutboundHttpClient({
          allowPrivateTargets: environment.delivery.allowPrivateTargets,
          connectionsPerOrigin: environment.delivery.originConcurrency,
        }),
    },
    DeliverySender,
    OutcomeStore,
    DeliveryLoader,
    DestinationSettingsCache,
    EndpointAdmission,
    AdmissionDoor,
    EndpointDisabling,
    SubjectOrder,
    EndpointGauges,
    OutcomeRecorder,
    ErasureCheck,
    DeliveryPipeline,
    DeliveryProcessor,
    Reconciler,
    HeldFeeder,
    OperationalEventsService,
    DeliveryRunner,
  ],
})
export class DeliveryModule {}
