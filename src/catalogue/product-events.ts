import { AmountField, EnumField, IdField, TextField } from './data-shape';

/** Every status a product can have. */
export const PRODUCT_STATUSES = ['DRAFT', 'ACTIVE', 'INACTIVE', 'ARCHIVED'] as const;
export type ProductStatus = (typeof PRODUCT_STATUSES)[number];

/**
 * `data` of product.created, product.updated and product.deleted: the platform's product shape,
 * for product.deleted as it was last seen.
 */
export class ProductEventData {
  @IdField({ description: 'Product identifier.', example: 'prod_3b9e62a1' })
  id: string;

  @TextField({ description: 'Product name.', example: 'Organic cotton T-shirt, black, M', maxLength: 500 })
  name: string;

  @TextField({ description: 'Stock-keeping unit code.', example: 'TSHIRT-BLK-M', maxLength: 64 })
  sku: string;

  @AmountField({ description: "Price in minor units of the store's currency (2499 = 24.99).", example: 2499 })
  price: number;

  @EnumField({ values: PRODUCT_STATUSES, description: 'Product status.', example: 'ACTIVE' })
  status: ProductStatus;
}
