import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { ADMIN_KEY, startApp, type TestApp } from './support/app';
import { launchChromium } from './support/browser';
import { eventually } from './support/eventually';
import { Receiver } from './support/receiver';

/**
 * The endpoint form's content filter, driven in Chromium against the real app and a real receiver:
 * typed, tested on a catalogue example of a ticked type (matching, not matching, refused), saved,
 * shown on the endpoint's page and obeyed by publishing, then cleared.
 */
const ARTIFACTS = join(__dirname, 'artifacts');
const LAPTOP = { width: 1366, height: 860 };
const UI_DEADLINE = 10_000;
const BIG_EUR = '$.data.total > 10000 && $.data.currency == "EUR"';

describe('dashboard: content filters', () => {
  let app: TestApp;
  let receiver: Receiver;
  let browser: Browser;
  const opened: Array<{ page: Page; problems: string[] }> = [];

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    receiver = await Receiver.start();
    app = await startApp();
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await receiver?.close();
  });

  afterEach(async () => {
    // No script error and no CSP violation (a 4xx is logged as "Failed to load resource": expected).
    const problems = opened.flatMap((entry) => entry.problems);
    for (const { page } of opened.splice(0)) await page.context().close();
    expect(problems).toEqual([]);
  });

  async function open(path: string): Promise<Page> {
    const context = await browser.newContext({ viewport: LAPTOP, colorScheme: 'light' });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
    });
    opened.push({ page, problems });
    await page.goto(`${app.baseUrl}${path}`);
    await page.getByLabel('API key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    return page;
  }

  async function visible(locator: Locator): Promise<void> {
    await locator.first().waitFor({ state: 'visible', timeout: UI_DEADLINE });
  }

  async function publish(total: number, currency: string): Promise<string> {
    const response = await app.api('/events', {
      method: 'POST',
      json: { type: 'order.created', data: { id: `ord_${total}`, orderNumber: 'ORD-1', status: 'PENDING', total, currency } },
    });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  }

  it('edits an endpoint’s filter, tests it on a catalogue example, saves it and publishing obeys it', async () => {
    const created = await app.api('/webhooks', {
      method: 'POST',
      json: { name: 'big-orders', url: `${receiver.url}/big-orders`, events: ['order.created', 'payment.received'] },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const page = await open(`/dashboard#/endpoints/${id}`);
    await visible(page.getByRole('heading', { name: 'big-orders', exact: true }));
    const shownFilter = page.locator('dl.settings dd').last();
    await expect(shownFilter.innerText()).resolves.toBe('None: every event of its types');

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('dialog', { name: 'Edit endpoint' });
    const filter = form.getByLabel('Content filter');
    const result = form.locator('#ep-filter-result');
    const example = form.getByLabel('Example event to test the filter on');
    // The examples offered are those of the ticked types.
    await expect(example.locator('option').allInnerTexts()).resolves.toEqual(['order.created', 'payment.received']);

    // The catalogue's order.created example is 4998 EUR: this filter does not match it...
    await filter.fill(BIG_EUR);
    await form.getByRole('button', { name: 'Test filter' }).click();
    await visible(result.getByText('Does not match: the catalogue’s example of order.created would not be sent.'));
    // ...and this one does.
    await filter.fill('$.data.total > 1000 && $.data.currency == "EUR"');
    await form.getByRole('button', { name: 'Test filter' }).click();
    await visible(result.getByText('Matches: the catalogue’s example of order.created would be sent.'));
    // A filter that does not parse: the parser's words, under the field.
    await filter.fill('$.data.total >');
    await form.getByRole('button', { name: 'Test filter' }).click();
    await visible(result.getByText('The filter does not parse: syntax error at end of jsonpath input.'));
    await expect(filter.getAttribute('aria-invalid')).resolves.toBe('true');
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-filter-refused.png'), animations: 'disabled' });

    // Saving a filter the API refuses changes nothing and says why beside the field.
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(result.getByText('The filter does not parse: syntax error at end of jsonpath input.'));
    await expect((await app.api(`/webhooks/${id}`)).json()).resolves.toMatchObject({ filter: null });

    await filter.fill(BIG_EUR);
    await form.getByRole('button', { name: 'Save changes' }).click();
    await eventually(
      () => shownFilter.innerText(),
      (text) => text === BIG_EUR,
      { what: 'the filter on the endpoint page' },
    );
    await expect((await app.api(`/webhooks/${id}`)).json()).resolves.toMatchObject({ filter: BIG_EUR });

    const small = await publish(500, 'EUR');
    const big = await publish(20_000, 'EUR');
    await receiver.waitFor(1, (request) => request.path === '/big-orders');
    const deliveries = async (): Promise<string[]> =>
      ((await (await app.api(`/webhooks/${id}/deliveries`)).json()) as { data: Array<{ eventId: string }> }).data.map((d) => d.eventId);
    await expect(deliveries()).resolves.toEqual([big]);
    expect(small).not.toBe(big);

    // Cleared: the form sends null, the page says so, and every order is sent again.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await form.getByLabel('Content filter').fill('');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await eventually(
      () => shownFilter.innerText(),
      (text) => text === 'None: every event of its types',
      { what: 'no filter on the page' },
    );
    const again = await publish(500, 'EUR');
    await eventually(deliveries, (ids) => ids.includes(again), { what: 'the small order delivered once the filter is cleared' });
  }, 90_000);
});
