import { CountField, IdField, TextField } from './data-shape';

/** `data` of stock.low: the product whose stock fell below its threshold. */
export class StockLowData {
  @IdField({ description: 'Product identifier.', example: 'prod_3b9e62a1' })
  productId: string;

  @TextField({ description: 'Stock-keeping unit code.', example: 'TSHIRT-BLK-M', maxLength: 64 })
  sku: string;

  @TextField({ description: 'Product name.', example: 'Organic cotton T-shirt, black, M', maxLength: 500 })
  name: string;

  @CountField({ description: 'Units in stock now.', example: 3 })
  quantity: number;

  @CountField({ description: "The product's low-stock threshold, in units (set by the store).", example: 5 })
  threshold: number;
}

/** `data` of stock.updated: a product's stock quantity, before and after the change. */
export class StockUpdatedData {
  @IdField({ description: 'Product identifier.', example: 'prod_3b9e62a1' })
  productId: string;

  @TextField({ description: 'Stock-keeping unit code.', example: 'TSHIRT-BLK-M', maxLength: 64 })
  sku: string;

  @CountField({ description: 'Units in stock before the change.', example: 12 })
  previousQuantity: number;

  @CountField({ description: 'Units in stock after the change.', example: 10 })
  quantity: number;
}
