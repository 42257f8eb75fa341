import { Injectable, Logger } from '@nestjs/common';
import { AppConfig } from '../../config/app-config';
import type { ClaimedDelivery } from '../store/delivery.repository';
import { Dispatcher } from '../worker/dispatcher';
import { EventRepository, type NewEvent } from '../store/event.repository';

interface Waiting {
  event: NewEvent;
  resolve: (deliveries: number) => void;
  reject: (error: unknown) => void;
}

/** More than this many events wait for the next statement. */
const MAX_BATCH = 500;

/**
 * Group commit for publishes that stand alone (no caller's transaction, no Idempotency-Key). The
 * first publish is written at once; those that arrive while it is being written go together in
 * the next statement, and so on: one round trip and one commit (one WAL flush) for each batch
 * instead of each event. Under load that is what keeps POST /events fast; at
 * rest every batch is a single event and nothing waits.
 *
 * A batch fails as a whole (an unknown store, say): its events are then written one by one, so
 * that each publish gets its own answer.
 */
@Injectable()
export class PublishBatcher {
  private readonly logger = new Logger(PublishBatcher.name);
  private waiting: Waiting[] = [];
  private writing = false;

  private readonly firstDelayMs: number;

  constructor(
    config: AppConfig,
    private readonly events: EventRepository,
    private readonly dispatcher: Dispatcher,
  ) {
    this.firstDelayMs = config.retryScheduleMs[0];
  }

  /** Resolves with the event's fan-out count once it is committed. */
  publish(event: NewEvent): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.waiting.push({ event, resolve, reject });
      if (!this.writing) void this.drain();
    });
  }

  /**
   * Writes a batch of events that must commit together (POST /events/batch) in its own statement,
   * at once, not split among group commits; with the same hand-off to this process's worker.
   * Resolves with each event's fan-out count.
   */
  publishAtOnce(events: NewEvent[]): Promise<Map<string, number>> {
    return this.publishHandingOff(events);
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.waiting.length > 0) {
        const batch = this.waiting.splice(0, MAX_BATCH);
        await this.write(batch);
      }
    } finally {
      this.writing = false;
    }
  }

  private async write(batch: Waiting[]): Promise<void> {
    try {
      const counts = await this.publishHandingOff(batch.map((w) => w.event));
      for (const waiting of batch) waiting.resolve(counts.get(waiting.event.id) ?? 0);
    } catch (error) {
      if (batch.length === 1) {
        batch[0].reject(error);
        return;
      }
      this.logger.debug(`a batch of ${batch.length} publishes failed (${String(error)}); writing them one by one`);
      for (const waiting of batch) {
        await this.events.publishMany([waiting.event], this.firstDelayMs).then(
          ({ counts }) => waiting.resolve(counts.get(waiting.event.id) ?? 0),
          (single: unknown) => waiting.reject(single),
        );
      }
    }
  }

  /**
   * Writes the events; when this process's worker has free slots, it takes their deliveries
   * straight away (Dispatcher.offerSlots): a first attempt leaves as soon as the commit returns.
   */
  private async publishHandingOff(events: NewEvent[]): Promise<Map<string, number>> {
    const handOff = this.firstDelayMs === 0 ? await this.dispatcher.offerSlotsAfterClaim() : undefined;
    if (!handOff) return (await this.events.publishMany(events, this.firstDelayMs)).counts;
    let leased: ClaimedDelivery[] = [];
    try {
      const published = await this.events.publishMany(events, this.firstDelayMs, handOff);
      const byId = new Map(events.map((event) => [event.id, event]));
      leased = published.leased.map((delivery) => ({
        ...delivery,
        storeId: byId.get(delivery.eventId)!.storeId,
        eventType: byId.get(delivery.eventId)!.type,
        body: byId.get(delivery.eventId)!.body,
        traceparent: byId.get(delivery.eventId)!.traceparent,
        attemptNumber: 1,
        cycleAttempt: 1,
        webhookActive: true,
        ordered: false,
      }));
      return published.counts;
    } finally {
      this.dispatcher.takeHandOff(leased);
    }
  }
}
