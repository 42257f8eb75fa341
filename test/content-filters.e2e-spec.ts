/**
 * Content filters against the real app, PostgreSQL and a real receiver: an endpoint's filter
 * decides which of its subscribed events it is sent, one at a time and in batches; a filter that
 * does not parse is refused and changes nothing; POST /webhooks/filter-test answers as publishing
 * decides; a filter set to null takes every event again.
 */
import { startApp, TestApp } from './support/app';
import { eventually } from './support/eventually';
import { createStoreWithKey, expectError, expectJson, rowCounts } from './support/expectations';
import { createWebhook, deliveriesOf, orderData, publish, type Published } from './support/fixtures';
import { Receiver } from './support/receiver';

const BIG_EUR = '$.data.total > 10000 && $.data.currency == "EUR"';

interface Endpoint {
  id: string;
  filter: string | null;
}

function order(n: number, total: number, currency: string): Record<string, unknown> {
  return { ...orderData(n), total, currency };
}

/** The event ids of the deliveries that reached `path`. */
function idsAt(receiver: Receiver, path: string): string[] {
  return receiver
    .to(path)
    .map((request) => String(request.headers['x-webhook-id']))
    .sort();
}

describe('content filters', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    t = await startApp();
    receiver = await Receiver.start();
  });

  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  async function put(id: string, json: unknown): Promise<Response> {
    return t.api(`/webhooks/${id}`, { method: 'PUT', json });
  }

  async function filterTest(json: unknown, key?: string | null): Promise<Response> {
    return t.api('/webhooks/filter-test', { method: 'POST', json, key });
  }

  it('delivers the events an endpoint’s filter matches, and creates no delivery for the others', async () => {
    const filtered = (await createWebhook(t, `${receiver.url}/one/filtered`, ['order.created'], {
      filter: BIG_EUR,
    })) as unknown as Endpoint;
    expect(filtered.filter).toBe(BIG_EUR);
    const whole = await createWebhook(t, `${receiver.url}/one/whole`, ['order.created']);
    const shown = await expectJson<Endpoint>(await t.api(`/webhooks/${filtered.id}`), 200);
    expect(shown.filter).toBe(BIG_EUR);
    const listed = await expectJson<{ data: Endpoint[] }>(await t.api('/webhooks'), 200);
    expect(listed.data.find((w) => w.id === filtered.id)!.filter).toBe(BIG_EUR);
    expect(listed.data.find((w) => w.id === whole.id)!.filter).toBeNull();

    const big = await publish(t, 'order.created', order(1, 20_000, 'EUR'));
    const dollars = await publish(t, 'order.created', order(2, 20_000, 'USD'));
    const small = await publish(t, 'order.created', order(3, 500, 'EUR'));
    expect([big.deliveries, dollars.deliveries, small.deliveries]).toEqual([2, 1, 1]);

    await receiver.waitFor(4, (r) => r.path.startsWith('/one/'));
    expect(idsAt(receiver, '/one/whole')).toEqual([big.id, dollars.id, small.id].sort());
    expect(idsAt(receiver, '/one/filtered')).toEqual([big.id]);
    // No delivery at all for the events it did not match: none pending, none failed. The
    // matched one's outcome is written just after the receiver answered, hence the wait.
    const deliveries = await eventually(
      () => deliveriesOf(t, filtered.id),
      (found) => found.every((d) => d.status !== 'pending'),
      { what: 'the filtered endpoint’s delivery recorded' },
    );
    expect(deliveries.map((d) => [d.eventId, d.status])).toEqual([[big.id, 'succeeded']]);
  });

  it('filters a batch in its one statement: each event reaches the endpoints it matches', async () => {
    // order.updated: the endpoints of the test before take order.created only.
    const eur = await createWebhook(t, `${receiver.url}/batch/eur`, ['order.updated', 'payment.received'], {
      filter: '$.data.currency == "EUR"',
    });
    const vip = await createWebhook(t, `${receiver.url}/batch/vip`, ['order.updated'], {
      filter: '$.data.total >= 10000 || $.data.orderNumber starts with "VIP"',
      ordered: true,
    });
    const all = await createWebhook(t, `${receiver.url}/batch/all`, ['order.updated']);
    const events = Array.from({ length: 200 }, (_, i) => ({
      type: 'order.updated',
      data: { ...order(i, i % 4 === 0 ? 15_000 : 900, i % 3 === 0 ? 'EUR' : 'GBP'), orderNumber: i % 10 === 5 ? `VIP-${i}` : `ORD-${i}` },
    }));
    const res = await t.api('/events/batch', { method: 'POST', json: { events } });
    const { data } = await expectJson<{ data: Published[] }>(res, 202);

    const matchesEur = (i: number): boolean => i % 3 === 0;
    const matchesVip = (i: number): boolean => i % 4 === 0 || i % 10 === 5;
    expect(data.map((entry) => entry.deliveries)).toEqual(events.map((_, i) => 1 + Number(matchesEur(i)) + Number(matchesVip(i))));
    const expected = (match: (i: number) => boolean): string[] =>
      data
        .filter((_, i) => match(i))
        .map((entry) => entry.id)
        .sort();
    const total = 200 + expected(matchesEur).length + expected(matchesVip).length;
    await receiver.waitFor(total, (r) => r.path.startsWith('/batch/'), 20_000);
    expect(idsAt(receiver, '/batch/all')).toHaveLength(200);
    expect(idsAt(receiver, '/batch/eur')).toEqual(expected(matchesEur));
    expect(idsAt(receiver, '/batch/vip')).toEqual(expected(matchesVip));
    // Every delivery the batch made is one the receiver got: none left over, once the outcomes are written.
    await eventually(
      async () => {
        const [{ count }] = await t.db.query<{ count: number }>(
          `SELECT count(*)::int AS count FROM deliveries WHERE webhook_id = ANY ($1) AND status <> 'succeeded'`,
          [[eur.id, vip.id, all.id]],
        );
        return count;
      },
      (count) => count === 0,
      { what: 'every batch delivery recorded as succeeded' },
    );
  });

  it('refuses a filter that does not parse with the parser’s message, naming filter, and changes nothing', async () => {
    const before = await rowCounts(t.db);
    await expectError(
      await t.api('/webhooks', {
        method: 'POST',
        json: { name: 'bad', url: `${receiver.url}/bad`, events: ['order.created'], filter: '$.data.total >' },
      }),
      400,
      'filter does not parse: syntax error at end of jsonpath input',
    );
    expect(await rowCounts(t.db)).toEqual(before);

    const hook = await createWebhook(t, `${receiver.url}/bad/put`, ['order.created'], { filter: BIG_EUR });
    const row = async (): Promise<unknown> => (await t.db.query('SELECT * FROM webhooks WHERE id = $1', [hook.id]))[0];
    const stored = await row();
    const refused: Array<[unknown, string | RegExp]> = [
      [{ filter: '$.data.email like_regex "("' }, 'filter does not parse: invalid regular expression: parentheses () not balanced'],
      [{ filter: '' }, 'filter does not parse: invalid input syntax for type jsonpath: ""'],
      [{ filter: '@.total > 1' }, 'filter does not parse: @ is not allowed in root expressions'],
      [{ filter: '$.data.total > $min' }, /^filter uses the variable \$"min", which no event supplies/],
      [{ filter: 42 }, 'filter must be a SQL/JSON path predicate of at most 1024 bytes, or null'],
      [{ filter: `$.data.note == "${'x'.repeat(1020)}"` }, /^filter must be .* at most 1024 bytes, or null; this one has 1037 bytes$/],
      [{ name: 'renamed', filter: '$.data.total >' }, 'filter does not parse: syntax error at end of jsonpath input'],
    ];
    for (const [json, message] of refused) {
      await expectError(await put(hook.id, json), 400, message);
      expect(await row()).toEqual(stored);
    }
  });

  it('answers filter-test as publishing decides', async () => {
    const event = {
      id: 'evt_01jd5v1xkq8w3r0m6m2n4p7s9t',
      type: 'order.created',
      timestamp: '2026-11-22T10:00:00.000Z',
      data: order(7, 14_998, 'EUR'),
    };
    const answer = async (filter: string, on: unknown = event): Promise<boolean> =>
      (await expectJson<{ matches: boolean }>(await filterTest({ filter, event: on }), 200)).matches;
    expect(await answer(BIG_EUR)).toBe(true);
    expect(await answer(BIG_EUR, { ...event, data: order(7, 14_998, 'USD') })).toBe(false);
    expect(await answer('$.type == "order.created" && !exists($.data.coupon)')).toBe(true);
    // A path that yields no single boolean does not match.
    expect(await answer('$.data.total')).toBe(false);

    await expectError(
      await filterTest({ filter: '$.data.total >', event }),
      400,
      'filter does not parse: syntax error at end of jsonpath input',
    );
    await expectError(await filterTest({ filter: '$.a == $b', event }), 400, /^filter uses the variable \$"b"/);
    await expectError(await filterTest({ filter: BIG_EUR, event: [event] }), 400, /^event must be an object/);
    await expectError(await filterTest({ filter: BIG_EUR }), 400, 'event is required');
    await expectError(await filterTest({ event }), 400, 'filter is required');
    await expectError(await filterTest({ filter: null, event }), 400, 'filter must be a SQL/JSON path predicate of at most 1024 bytes');
    await expectError(await filterTest({ filter: BIG_EUR, event, extra: 1 }), 400, 'property extra should not exist');
  });

  it('opens filter-test to a key that may read endpoints, and to no other', async () => {
    const { key: reader } = await createStoreWithKey(t, 'readers', ['webhooks:read']);
    const { key: publisher } = await createStoreWithKey(t, 'publishers', ['events:write']);
    const json = { filter: BIG_EUR, event: { data: order(1, 20_000, 'EUR') } };
    expect(await expectJson(await filterTest(json, reader.key), 200)).toEqual({ matches: true });
    await expectError(await filterTest(json, publisher.key), 403);
    await expectError(await filterTest(json, null), 401);
  });

  it('takes every event again once the filter is cleared, and filters again once it is set', async () => {
    const hook = await createWebhook(t, `${receiver.url}/clear`, ['order.created'], { filter: BIG_EUR });
    const cleared = await expectJson<Endpoint>(await put(hook.id, { filter: null }), 200);
    expect(cleared.filter).toBeNull();
    const small = await publish(t, 'order.created', order(20, 100, 'EUR'));
    await receiver.waitFor(1, (r) => r.path === '/clear');
    expect(idsAt(receiver, '/clear')).toEqual([small.id]);

    const changed = await expectJson<Endpoint>(await put(hook.id, { filter: '$.data.currency == "CHF"' }), 200);
    expect(changed.filter).toBe('$.data.currency == "CHF"');
    const francs = await publish(t, 'order.created', order(21, 100, 'CHF'));
    const euros = await publish(t, 'order.created', order(22, 100, 'EUR'));
    // The deliveries are written by the publish itself: euros has none to this endpoint.
    expect((await deliveriesOf(t, hook.id)).map((d) => d.eventId).sort()).toEqual([small.id, francs.id].sort());
    expect((await deliveriesOf(t, hook.id)).some((d) => d.eventId === euros.id)).toBe(false);
    await receiver.waitFor(2, (r) => r.path === '/clear');
    expect(idsAt(receiver, '/clear')).toEqual([small.id, francs.id].sort());
  });
  it('replays only the events the filter matches now', async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const hook = await createWebhook(t, `${receiver.url}/replay`, ['order.cancelled'], { filter: BIG_EUR });
    const big = await publish(t, 'order.cancelled', order(30, 20_000, 'EUR'));
    const small = await publish(t, 'order.cancelled', order(31, 100, 'EUR'));
    await receiver.waitFor(1, (r) => r.path === '/replay');
    const replay = async (): Promise<{ queued: number }> =>
      expectJson<{ queued: number }>(await t.api(`/webhooks/${hook.id}/replay`, { method: 'POST', json: { since } }), 202);
    // The small order was not missed: the filter left it out.
    expect(await replay()).toEqual({ queued: 0 });
    expect(await expectJson<Endpoint>(await put(hook.id, { filter: null }), 200)).toMatchObject({ filter: null });
    expect(await replay()).toEqual({ queued: 1 });
    await receiver.waitFor(2, (r) => r.path === '/replay');
    expect(idsAt(receiver, '/replay')).toEqual([big.id, small.id].sort());
  });
});
