import { IdField, TextField } from './data-shape';

/** `data` of webhook.test, the event sent by POST /webhooks/:id/test. */
export class TestEventData {
  @IdField({ description: 'Identifier of the webhook endpoint tested.', example: 'wh_01jd3v8k2m9q4r7s6t5v4w3x2y' })
  webhookId: string;

  @TextField({ description: 'Name of the webhook endpoint tested.', example: 'Order sync' })
  name: string;

  @TextField({
    description: 'A human-readable note that this is a test.',
    example: 'This is a test event from Hookline. No action is needed.',
    maxLength: 500,
  })
  message: string;
}
