import { PartialType } from '@nestjs/swagger';
import { CreateWebhookDto } from './create-webhook.dto';

/** PUT is partial (CONTRACT §5): fields left out keep their value; at least one must be given. */
export class UpdateWebhookDto extends PartialType(CreateWebhookDto) {}
