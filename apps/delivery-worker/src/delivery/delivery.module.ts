import { Module } from '@nestjs/common';
import { DeliveryQueueModule, ENVIRONMENT, type Environment, OutboundHttpClient } from '@app/runtime';
import { AccountSettingsCache } from './account-settings.cache';
import { DeliveryProcessor } from './delivery.processor';
import { DELIVERY_HTTP_CLIENT } from './request/callback-exchange';
import { DeliveryService } from './delivery.service';
import { OutcomeRecorder } from './outcome/outcome-recorder.service';
import { DeliveryRunner } from './delivery-runner.service';
import { OutcomeStore } from './outcome/outcome-store';
import { EventLoader } from './loading/event-loader';
import { EndpointGauges } from './endpoint-gauges';
import { AdmissionDoor } from './admission/admission-door';
import { EndpointAdmission } from './admission/endpoint-admission';
import { EndpointDisabling } from './admission/endpoint-disabling';
import { SubjectOrder } from './ordering/subject-order';
import { Reconciler } from './reconciler.service';
import { ErasureCheck } from './erasure-check';
import { DestinationDeliveryLoader } from './destination-delivery/destination-delivery-loader';
import { DestinationDeliveryService } from './destination-delivery/destination-delivery.service';
import { DestinationOutcomes } from './destination-delivery/destination-outcomes';
import { DestinationOutcomeStore } from './destination-delivery/destination-outcome-store';
import { SubjectHold } from './destination-delivery/subject-hold';

/** The delivery processor, retries, endpoint isolation (leases and circuit breaker) and the reconciler. */
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
    OutcomeStore,
    EventLoader,
    AccountSettingsCache,
    EndpointAdmission,
    AdmissionDoor,
    EndpointDisabling,
    SubjectOrder,
    EndpointGauges,
    OutcomeRecorder,
    ErasureCheck,
    DestinationDeliveryLoader,
    DestinationOutcomes,
    DestinationOutcomeStore,
    SubjectHold,
    DestinationDeliveryService,
    DeliveryService,
    DeliveryProcessor,
    Reconciler,
    DeliveryRunner,
  ],
})
export class DeliveryModule {}
