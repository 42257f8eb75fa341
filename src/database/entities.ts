/** Every TypeORM entity, for the app and for the TypeORM CLI (ormconfig.ts). */
export const ENTITIES: Function[] = [];
