import { Metrics } from './metrics';

async function disabledLines(metrics: Metrics): Promise<string[]> {
  return (await metrics.registry.metrics()).split('\n').filter((line) => line.startsWith('hookline_endpoints_disabled{'));
}

describe('Metrics: disabled endpoints', () => {
  it('shows every reason, 0 included, counted when /metrics is read; an inactive endpoint without a reason counts as manual', async () => {
    const metrics = new Metrics();
    let counts = [
      { reason: 'gone', count: 2 },
      { reason: null, count: 1 },
      { reason: 'manual', count: 1 },
    ];
    metrics.countDisabledEndpointsWith(async () => counts);
    expect(await disabledLines(metrics)).toEqual([
      'hookline_endpoints_disabled{reason="manual"} 2',
      'hookline_endpoints_disabled{reason="gone"} 2',
      'hookline_endpoints_disabled{reason="failing"} 0',
    ]);
    counts = [{ reason: 'failing', count: 3 }];
    expect(await disabledLines(metrics)).toContain('hookline_endpoints_disabled{reason="failing"} 3');
    expect(await disabledLines(metrics)).toContain('hookline_endpoints_disabled{reason="gone"} 0');
  });

  it('keeps the last values when counting fails (the database is away)', async () => {
    const metrics = new Metrics();
    let fail = false;
    metrics.countDisabledEndpointsWith(async () => {
      if (fail) throw new Error('connection refused');
      return [{ reason: 'gone', count: 1 }];
    });
    await disabledLines(metrics);
    fail = true;
    expect(await disabledLines(metrics)).toContain('hookline_endpoints_disabled{reason="gone"} 1');
  });
});
