import { DataSourceOptions } from 'typeorm';
import { InitialSchema1795377000000 } from './migrations/1795377000000-InitialSchema';
import { EndpointSettings1795600000000 } from './migrations/1795600000000-EndpointSettings';
import { AttemptTrigger1795634000000 } from './migrations/1795634000000-AttemptTrigger';
import { EndpointFlowControl1795700000000 } from './migrations/1795700000000-EndpointFlowControl';
import { EndpointHealth1795710000000 } from './migrations/1795710000000-EndpointHealth';
import { PartitionedLog1795800000000 } from './migrations/1795800000000-PartitionedLog';
import { DeliveriesWithoutEventIndex1795900000000 } from './migrations/1795900000000-DeliveriesWithoutEventIndex';
import { DeliveryRestartedAt1796200000000 } from './migrations/1796200000000-DeliveryRestartedAt';
import { SensitiveHeaders1796100000000 } from './migrations/1796100000000-SensitiveHeaders';
import { DeliveriesDueByStore1796400000000 } from './migrations/1796400000000-DeliveriesDueByStore';
import { DueIndexOfUnleased1796400000001 } from './migrations/1796400000001-DueIndexOfUnleased';
import { PortalSessions1796500000000 } from './migrations/1796500000000-PortalSessions';
import { ContentFilters1796600000000 } from './migrations/1796600000000-ContentFilters';
import { ReceiverAuthentication1796700000000 } from './migrations/1796700000000-ReceiverAuthentication';
import { CitusDistribution1796800000000 } from './migrations/1796800000000-CitusDistribution';
import { EventTraceparent1796900000000 } from './migrations/1796900000000-EventTraceparent';
import { HotQueue1797000000000 } from './migrations/1797000000000-HotQueue';
import { LogWithoutForeignKeys1797100000000 } from './migrations/1797100000000-LogWithoutForeignKeys';

/** Every migration, in order. Listed explicitly so that ts-jest, ts-node and dist/ all agree. */
export const MIGRATIONS = [
  InitialSchema1795377000000,
  EndpointSettings1795600000000,
  AttemptTrigger1795634000000,
  EndpointFlowControl1795700000000,
  EndpointHealth1795710000000,
  PartitionedLog1795800000000,
  DeliveriesWithoutEventIndex1795900000000,
  SensitiveHeaders1796100000000,
  DeliveryRestartedAt1796200000000,
  DeliveriesDueByStore1796400000000,
  DueIndexOfUnleased1796400000001,
  PortalSessions1796500000000,
  ContentFilters1796600000000,
  ReceiverAuthentication1796700000000,
  CitusDistribution1796800000000,
  EventTraceparent1796900000000,
  HotQueue1797000000000,
  LogWithoutForeignKeys1797100000000,
];

/**
 * Entities are not listed here: each feature module registers its own with
 * `TypeOrmModule.forFeature` (the app loads them automatically), so the database knows no feature.
 */
export function dataSourceOptions(url: string, poolSize = 10, entities: DataSourceOptions['entities'] = []): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsRun: false,
    synchronize: false,
    logging: false,
    poolSize,
    extra: {
      application_name: 'hookline',
      // Fail fast instead of queueing forever when PostgreSQL is unreachable.
      connectionTimeoutMillis: 5_000,
    },
  };
}
