import { AmountField, CurrencyField, EnumField, IdField, TextField } from './data-shape';

/** How the customer paid. */
export const PAYMENT_METHODS = ['CARD', 'CASH_ON_DELIVERY', 'BANK_TRANSFER', 'WALLET'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/**
 * The payment's status when an event fires: CAPTURED on payment.received (a card capture or cash
 * collected on delivery); REFUNDED, PARTIALLY_REFUNDED or CANCELLED on payment.refunded.
 */
export const PAYMENT_STATUSES = ['CAPTURED', 'PARTIALLY_REFUNDED', 'REFUNDED', 'CANCELLED'] as const;
export type PaymentStatus = (typeof PAYMENT_STATUSES)[number];

/** `data` of payment.received: the platform's payment shape. */
export class PaymentEventData {
  @IdField({ description: 'Identifier of the order paid for.', example: 'ord_8c2f41d7' })
  orderId: string;

  @TextField({ description: 'Human-readable order number.', example: 'ORD-1042', maxLength: 64 })
  orderNumber: string;

  @AmountField({ description: 'Amount paid, in minor currency units.', example: 4998 })
  amount: number;

  @CurrencyField()
  currency: string;

  @EnumField({ values: PAYMENT_METHODS, description: 'How the customer paid.', example: 'CARD' })
  paymentMethod: PaymentMethod;

  @EnumField({
    values: PAYMENT_STATUSES,
    description: 'Payment status: CAPTURED on payment.received; REFUNDED, PARTIALLY_REFUNDED or CANCELLED on payment.refunded.',
    example: 'CAPTURED',
  })
  status: PaymentStatus;
}

/** `data` of payment.refunded: the payment, how much of it has been refunded so far, and why. */
export class PaymentRefundedData extends PaymentEventData {
  @AmountField({
    description: 'Total refunded on this payment so far, this refund included, in minor currency units; at most amount.',
    example: 1999,
    refine: (value, payment) => (typeof payment.amount === 'number' && value > payment.amount ? 'must not exceed data.amount' : undefined),
  })
  refundedAmount: number;

  @TextField({ description: 'Why the payment was refunded or cancelled.', example: 'Item returned', maxLength: 500, optional: true })
  reason?: string;
}
