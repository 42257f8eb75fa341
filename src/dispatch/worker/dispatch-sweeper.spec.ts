import type { DeliveryRepository } from '../store/delivery.repository';
import { DispatchSweeper } from './dispatch-sweeper';
import type { Dispatcher } from './dispatcher';

describe('DispatchSweeper', () => {
  function sweeperWith(released: () => Promise<number>, running = true) {
    const wakes: number[] = [];
    const dispatcher = { isRunning: running, wake: () => wakes.push(Date.now()) } as unknown as Dispatcher;
    const deliveries = { releaseStalledOrdered: jest.fn(released) };
    const sweeper = new DispatchSweeper(dispatcher, deliveries as unknown as DeliveryRepository);
    return { sweeper, wakes, deliveries };
  }

  const settled = () => new Promise((resolve) => setImmediate(resolve));

  it('asks for a claim every poll, and once more when it let go of a stalled ordered delivery', async () => {
    const { sweeper, wakes } = sweeperWith(async () => 1);
    sweeper.poll();
    await settled();
    expect(wakes).toHaveLength(2);
  });

  it('asks for one claim when nothing was stalled, and survives a database error', async () => {
    const quiet = sweeperWith(async () => 0);
    quiet.sweeper.poll();
    await settled();
    expect(quiet.wakes).toHaveLength(1);

    const failing = sweeperWith(() => Promise.reject(new Error('connect ECONNREFUSED')));
    failing.sweeper.poll();
    await settled();
    expect(failing.wakes).toHaveLength(1);
  });

  it('does nothing in a process that runs no worker', async () => {
    const { sweeper, wakes, deliveries } = sweeperWith(async () => 1, false);
    sweeper.poll();
    await settled();
    expect(wakes).toEqual([]);
    expect(deliveries.releaseStalledOrdered).not.toHaveBeenCalled();
  });
});
