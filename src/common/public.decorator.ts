import { SetMetadata } from '@nestjs/common';

export const PUBLIC_ROUTE = 'hookline:public';

/** A route that needs no API key (health, metrics, docs, the dashboard's files). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_ROUTE, true);
