import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Client } from 'pg';
import { DataSource, EntityManager } from 'typeorm';
import { AppConfig } from '../config/app-config';

type Handler = (payload: string) => void;

const MAX_BACKOFF_MS = 10_000;

/**
 * PostgreSQL LISTEN/NOTIFY for the whole process on one dedicated connection: it wakes the
 * dispatcher within milliseconds of new work and tells every process that an API key was
 * revoked. A notification can be lost while the connection is down, so subscribers also get
 * `onReconnect` to catch up (the dispatcher polls, caches flush).
 */
@Injectable()
export class PgNotifier implements OnApplicationShutdown {
  private readonly logger = new Logger(PgNotifier.name);
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly reconnectHandlers = new Set<() => void>();
  private client?: Client;
  /** Clients already reported lost ('error', 'end' and a failed connect can each report one). */
  private readonly lostClients = new WeakSet<Client>();
  private reconnectTimer?: NodeJS.Timeout;
  private connecting?: Promise<void>;
  private backoffMs = 250;
  private closed = false;

  constructor(
    private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Calls `handler` with each notification's payload on `channel`; returns an unsubscribe function. */
  listen(channel: string, handler: Handler): () => void {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
      if (this.client) void this.client.query(`LISTEN ${quoteChannel(channel)}`).catch(() => undefined);
    }
    set.add(handler);
    this.ensureConnected();
    return () => set.delete(handler);
  }

  /** Runs after the listening connection was re-established (notifications may have been missed). */
  onReconnect(handler: () => void): () => void {
    this.reconnectHandlers.add(handler);
    return () => this.reconnectHandlers.delete(handler);
  }

  /** Sends a notification; inside a transaction (`manager`) it is delivered only if that commits. */
  async notify(channel: string, payload = '', manager?: EntityManager): Promise<void> {
    await (manager ?? this.dataSource.manager).query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  async onApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private ensureConnected(): void {
    if (this.client || this.connecting || this.closed) return;
    this.connecting = this.connect().finally(() => (this.connecting = undefined));
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.config.databaseUrl, application_name: 'hookline-listen' });
    client.on('notification', (message) => {
      for (const handler of this.handlers.get(message.channel) ?? []) {
        try {
          handler(message.payload ?? '');
        } catch (error) {
          this.logger.error({ err: error }, `notification handler for ${message.channel} failed`);
        }
      }
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${quoteChannel(channel)}`);
    } catch (error) {
      this.lost(client, error);
      await client.end().catch(() => undefined);
      return;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    const wasReconnect = this.backoffMs > 250;
    this.client = client;
    this.backoffMs = 250;
    if (wasReconnect) this.logger.log('LISTEN connection re-established');
    for (const handler of this.reconnectHandlers) handler();
  }

  /**
   * One reconnection per lost client, one timer at a time: a loss is reported two or three times
   * (error, end, failed connect), and a retry per report would multiply over a long outage.
   */
  private lost(client: Client, error?: unknown): void {
    if (this.lostClients.has(client)) return;
    this.lostClients.add(client);
    if (this.client === client) this.client = undefined;
    if (this.closed || this.reconnectTimer) return;
    if (error) this.logger.warn(`LISTEN connection lost: ${describe(error)}; retrying in ${this.backoffMs} ms`);
    const delay = this.backoffMs;
    this.backoffMs = Math.min(this.backoffMs * 2, MAX_BACKOFF_MS);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.ensureConnected();
    }, delay).unref();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : JSON.stringify(error);
}

function quoteChannel(channel: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid channel name ${channel}`);
  return channel;
}
