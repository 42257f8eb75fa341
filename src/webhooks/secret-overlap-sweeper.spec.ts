import type { WebhookRepository } from './webhook.repository';
import { SecretOverlapSweeper } from './secret-overlap-sweeper';

describe('SecretOverlapSweeper', () => {
  it('erases ended overlaps on each sweep', async () => {
    const eraseEndedOverlaps = jest.fn().mockResolvedValue(2);
    await new SecretOverlapSweeper({ eraseEndedOverlaps } as unknown as WebhookRepository).sweep();
    expect(eraseEndedOverlaps).toHaveBeenCalledTimes(1);
  });

  it('survives a database that is away: the next sweep tries again', async () => {
    const eraseEndedOverlaps = jest.fn().mockRejectedValueOnce(new Error('connection refused')).mockResolvedValue(0);
    const sweeper = new SecretOverlapSweeper({ eraseEndedOverlaps } as unknown as WebhookRepository);
    await expect(sweeper.sweep()).resolves.toBeUndefined();
    await expect(sweeper.sweep()).resolves.toBeUndefined();
    expect(eraseEndedOverlaps).toHaveBeenCalledTimes(2);
  });
});
