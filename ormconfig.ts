/**
 * The data source of the TypeORM CLI (`npm run migration:run`, `npm run migration:generate`).
 * It needs a real server: DATABASE_URL must be set. The app itself runs migrations at start.
 */
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source-options';

const url = process.env.DATABASE_URL;
if (!url) throw new Error('DATABASE_URL must point at a PostgreSQL server for the TypeORM CLI');

export default new DataSource(dataSourceOptions(url, 10, [`${__dirname}/src/**/*.entity.ts`]));
