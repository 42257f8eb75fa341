import { ApiKey } from '../auth/api-key.entity';
import { Store } from '../auth/store.entity';
import { DeliveryAttempt } from '../dispatch/delivery-attempt.entity';
import { Delivery } from '../dispatch/delivery.entity';
import { Event } from '../events/event.entity';
import { Webhook } from '../webhooks/webhook.entity';

/** Every TypeORM entity, for the app and for the TypeORM CLI (ormconfig.ts). */
export const ENTITIES: Function[] = [Store, ApiKey, Webhook, Event, Delivery, DeliveryAttempt];
