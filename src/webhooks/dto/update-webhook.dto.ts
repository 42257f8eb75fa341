import { PartialType } from '@nestjs/swagger';
import { CreateWebhookDto } from './create-webhook.dto';

/**
 * PUT is partial: fields left out keep their value; at least one must be given.
 * `skipNullProperties: false`: a field sent as null is validated (and refused), not skipped, so it
 * never reaches the NOT NULL columns as a 500.
 */
export class UpdateWebhookDto extends PartialType(CreateWebhookDto, { skipNullProperties: false }) {}
