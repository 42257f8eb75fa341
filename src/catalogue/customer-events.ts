import { EmailField, IdField, PhoneField, TextField } from './data-shape';

/** `data` of customer.created and customer.updated: the customer as they are now. */
export class CustomerEventData {
  @IdField({ description: 'Customer identifier.', example: 'cus_5a7d0c13' })
  id: string;

  @EmailField({ description: 'Email address.', example: 'ana.novak@example.com' })
  email: string;

  @TextField({ description: 'First name.', example: 'Ana' })
  firstName: string;

  @TextField({ description: 'Last name.', example: 'Novak' })
  lastName: string;

  @PhoneField({ description: 'Phone number in E.164 form, when the customer gave one.', example: '+38640123456', optional: true })
  phone?: string;
}
