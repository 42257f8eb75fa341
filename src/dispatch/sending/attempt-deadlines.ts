import { EventEmitter } from 'node:events';

/** How often expired attempts are looked for: the time limit fires at most this much late. */
const SWEEP_INTERVAL_MS = 20;

/**
 * An abort signal in the form undici also accepts (an EventEmitter that emits 'abort'), fired
 * by {@link AttemptDeadlines}' one shared timer instead of a timer of its own.
 */
export class DeadlineSignal extends EventEmitter {
  aborted = false;

  constructor(readonly deadline: number) {
    super();
  }

  fire(): void {
    this.aborted = true;
    this.emit('abort');
  }
}

/**
 * The whole-attempt time limit of every attempt in flight, on one timer. `AbortSignal.timeout()`
 * per request costs a timer, a DOMException and undici's EventTarget bookkeeping each; one sweep
 * every 20 ms over the few hundred in flight is far cheaper (docs/scaling.md), at the price of
 * firing up to 20 ms late.
 */
export class AttemptDeadlines {
  private readonly active = new Set<DeadlineSignal>();
  private timer?: NodeJS.Timeout;

  start(timeoutMs: number): DeadlineSignal {
    const signal = new DeadlineSignal(Date.now() + timeoutMs);
    this.active.add(signal);
    this.timer ??= setInterval(() => this.sweep(), SWEEP_INTERVAL_MS).unref();
    return signal;
  }

  /** The attempt ended (whichever way): its deadline no longer matters. */
  end(signal: DeadlineSignal): void {
    this.active.delete(signal);
    if (this.active.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private sweep(): void {
    const now = Date.now();
    for (const signal of this.active) {
      if (signal.deadline > now) continue;
      this.active.delete(signal);
      signal.fire();
    }
  }
}
