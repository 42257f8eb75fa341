/**
 * What the events module may use of dispatch: writing events with their deliveries, and reading
 * them back for the events API. Everything else in dispatch stays behind this door.
 */
export { PublishBatcher } from './publish-batcher';
export { EventRepository, type NewEvent } from '../store/event.repository';
export { DeliveryLog } from '../store/delivery-log.repository';
export { DeliveryResponse, EnvelopeResponse } from '../api/dto/delivery.response';
