import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Locator, Page } from 'playwright-core';
import { Client } from 'pg';
import { ADMIN_KEY, startApp, type TestApp } from './support/app';
import { launchChromium } from './support/browser';
import { ChildApp } from './support/child-app';
import { createTestDatabase } from './support/database';
import { eventually } from './support/eventually';
import { Receiver } from './support/receiver';
import { verifyWebhook } from '../src/receiver/verify-webhook';

/**
 * The dashboard driven in a real browser, Chromium, against the real app and a
 * real receiver on loopback. Screenshots of every main view go to test/artifacts/.
 */
const ARTIFACTS = join(__dirname, 'artifacts');
const LAPTOP = { width: 1366, height: 860 };
const PHONE = { width: 390, height: 844 };
const UI_DEADLINE = 10_000;

/** A line of the server's log (pino JSON), and pino's level number of a warning. */
type LogLine = { level?: number; msg?: string; req?: { url?: string } };
const PINO_WARN = 40;

const orderData = { id: 'ord_1001', orderNumber: 'ORD-1001', status: 'PENDING', total: 4998, currency: 'EUR' };

describe('dashboard files', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startApp();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('serves the page without an API key, under a strict Content-Security-Policy, revalidated by ETag', async () => {
    const page = await fetch(`${app.baseUrl}/dashboard`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(page.headers.get('cache-control')).toBe('no-cache');
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);

    const script = await fetch(`${app.baseUrl}/dashboard/js/app.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    const etag = script.headers.get('etag')!;
    const again = await fetch(`${app.baseUrl}/dashboard/js/app.js`, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);

    expect((await fetch(`${app.baseUrl}/dashboard/dashboard.css`)).headers.get('content-type')).toMatch(/^text\/css/);
    expect((await fetch(`${app.baseUrl}/api/v1/external/dashboard`)).status).toBe(200);
  });

  it('answers an unknown dashboard file with the JSON 404 of every error', async () => {
    for (const path of ['/dashboard/nope.js', '/dashboard/..%2Fpackage.json', '/dashboard/js/../../../package.json']) {
      const response = await fetch(`${app.baseUrl}${path}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ statusCode: 404, error: 'Not Found' });
    }
  });
});

describe('dashboard in a browser', () => {
  let app: TestApp;
  let receiver: Receiver;
  let browser: Browser;
  const opened: Array<{ page: Page; problems: string[] }> = [];

  beforeAll(async () => {
    await mkdir(ARTIFACTS, { recursive: true });
    receiver = await Receiver.start();
    app = await startApp({ env: { RETRY_SCHEDULE_MS: '0,200,400' } });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await receiver?.close();
  });

  afterEach(async () => {
    // Every page must have run without a script error or a CSP violation. (A 4xx answer is
    // logged by the browser as "Failed to load resource"; the page expects those.)
    const problems = opened.flatMap((entry) => entry.problems);
    for (const { page } of opened.splice(0)) await page.context().close();
    expect(problems).toEqual([]);
  });

  async function open(path = '/dashboard', options: BrowserContextOptions = {}, on: TestApp = app): Promise<Page> {
    const context = await browser.newContext({ viewport: LAPTOP, colorScheme: 'light', ...options });
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
    });
    opened.push({ page, problems });
    await page.goto(`${on.baseUrl}${path}`);
    return page;
  }

  async function signIn(page: Page, key: string): Promise<void> {
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  function heading(page: Page, name: string): Locator {
    return page.getByRole('heading', { name, exact: true });
  }

  async function visible(locator: Locator, timeout = UI_DEADLINE): Promise<void> {
    await locator.first().waitFor({ state: 'visible', timeout });
  }

  /**
   * The signing secret of a secret dialog, checked to be shown whole, `whsec_` first: nothing of
   * it scrolled or cut out of view (an input scrolls to its end when it takes the focus).
   */
  async function shownSecret(dialog: Locator): Promise<string> {
    const secret = dialog.getByLabel('Signing secret');
    await visible(secret);
    const view = await secret.evaluate((element) => {
      const box = element as unknown as { scrollLeft: number; scrollWidth: number; clientWidth: number; innerText?: string };
      return { text: box.innerText ?? '', scrollLeft: box.scrollLeft, hiddenWidth: Math.max(box.scrollWidth - box.clientWidth, 0) };
    });
    expect(view).toEqual({ text: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/), scrollLeft: 0, hiddenWidth: 0 });
    return view.text;
  }

  /** The text an element shows, what its stylesheet adds after it (`::after`) included. */
  function shownText(locator: Locator): Promise<string> {
    return locator.evaluate((element) => {
      const view = globalThis as unknown as { getComputedStyle(element: unknown, pseudo: string): { content: string } };
      const after = view.getComputedStyle(element, '::after').content;
      return (element as unknown as { innerText: string }).innerText + (after.startsWith('"') ? (JSON.parse(after) as string) : '');
    });
  }

  async function shot(page: Page, name: string, fullPage = false): Promise<void> {
    await page.screenshot({ path: join(ARTIFACTS, `dashboard-${name}.png`), fullPage, animations: 'disabled' });
  }

  async function createEndpoint(name: string, events = ['order.created'], on: TestApp = app): Promise<{ id: string; secret: string }> {
    const response = await on.api('/webhooks', { method: 'POST', json: { name, url: `${receiver.url}/${name}`, events } });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; secret: string };
  }

  async function publishOrder(on: TestApp = app): Promise<void> {
    const response = await on.api('/events', { method: 'POST', json: { type: 'order.created', data: orderData } });
    expect(response.status).toBe(202);
  }

  async function createKey(scopes: string[]): Promise<{ id: string; key: string }> {
    const response = await app.api('/api-keys', { method: 'POST', json: { name: `dashboard ${scopes.join(' ')}`, scopes } });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; key: string };
  }

  it('signs in, creates an endpoint showing its secret once, watches a delivery fail three times, retries it and sees it succeed', async () => {
    receiver.respondStatus(500, '{"error":"database down"}');
    const page = await open();
    await visible(heading(page, 'Sign in'));
    await shot(page, 'sign-in-laptop');
    await signIn(page, ADMIN_KEY);
    await visible(heading(page, 'Endpoints'));
    await page.evaluate(() => ((globalThis as unknown as { sameDocument: boolean }).sameDocument = true));

    await page.getByRole('button', { name: 'New endpoint' }).click();
    const form = page.getByRole('dialog', { name: 'New endpoint' });
    await form.getByLabel('Name', { exact: true }).fill('ERP order sync');
    await form.getByLabel('URL').fill(`${receiver.url}/erp`);
    await form.getByRole('checkbox', { name: /order\.created/ }).check();
    await form.getByRole('checkbox', { name: /payment\.received/ }).check();
    await shot(page, 'create-form-laptop');
    await form.getByRole('button', { name: 'Create endpoint' }).click();

    const secretDialog = page.getByRole('dialog', { name: 'Endpoint created' });
    await visible(secretDialog);
    const secret = await shownSecret(secretDialog);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await visible(secretDialog.getByText('it will not be shown again'));
    await visible(secretDialog.getByRole('button', { name: 'Copy secret' }));
    await shot(page, 'create-with-secret-laptop');
    await secretDialog.getByRole('button', { name: 'I have saved it' }).click();

    await visible(heading(page, 'ERP order sync'));
    await visible(page.getByText('No deliveries yet'));
    expect(await page.content()).not.toContain(secret);

    await publishOrder();
    const failedRow = page.locator('tbody tr[data-status="failed"]');
    await visible(failedRow);
    expect(await failedRow.getByRole('cell', { name: '3', exact: true }).count()).toBe(1);
    expect(receiver.to('/erp')).toHaveLength(3);
    await visible(page.getByText('0%'));
    await shot(page, 'deliveries-laptop', true);

    await failedRow.getByRole('link', { name: 'order.created' }).click();
    await visible(heading(page, 'order.created'));
    await visible(page.locator('.endpoint-head [data-status="failed"]'));
    await expect(page.locator('.attempt').count()).resolves.toBe(3);
    await visible(heading(page, 'Attempts (3)'));
    // Failed attempts show their response body without a click.
    for (const body of await page.locator('.attempt-bad .response').all()) {
      await expect(body.textContent()).resolves.toBe('{"error":"database down"}');
      expect(await body.isVisible()).toBe(true);
    }
    await expect(page.locator('.attempt-bad details[open]').count()).resolves.toBe(3);
    await visible(page.getByText('"orderNumber": "ORD-1001"'));
    await shot(page, 'delivery-failed-laptop', true);

    receiver.respondStatus(200, '{"received":true}');
    await page.getByRole('button', { name: 'Retry delivery' }).click();
    await visible(page.locator('.endpoint-head [data-status="succeeded"]'));
    await visible(heading(page, 'Attempts (4)'));
    await visible(page.locator('.attempt-ok').getByText('HTTP 200'));
    await expect(page.locator('.attempt-ok details:not([open])').count()).resolves.toBe(1);
    await receiver.waitFor(4, (request) => request.path === '/erp');
    const deliveryId = new URL(page.url()).hash.split('/').pop()!;
    const detail = (await (await app.api(`/deliveries/${deliveryId}`)).json()) as { attempts: Array<{ number: number; trigger: string }> };
    expect(detail.attempts.map(({ number, trigger }) => [number, trigger])).toEqual([
      [1, 'scheduled'],
      [2, 'scheduled'],
      [3, 'scheduled'],
      [4, 'manual'],
    ]);
    // The retry's cycle is marked apart from the schedule's attempts.
    await expect(page.locator('.attempt[data-trigger="manual"] .attempt-number').allTextContents()).resolves.toEqual(['#4']);
    await expect(page.locator('.attempt').getByText('Manual retry', { exact: true }).count()).resolves.toBe(1);
    await visible(page.locator('.attempt', { hasText: '#4' }).getByText('Manual retry'));
    await shot(page, 'delivery-detail-laptop', true);

    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'ERP order sync' }).click();
    await visible(page.locator('tbody tr[data-status="succeeded"]'));
    await visible(page.getByText('100%'));
    await page.getByRole('link', { name: 'Endpoints', exact: true }).first().click();
    await visible(page.getByRole('link', { name: 'ERP order sync' }));
    await visible(page.locator('td').getByText('100%'));
    await shot(page, 'endpoints-laptop');
    expect(await page.evaluate(() => (globalThis as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
  }, 60_000);

  it('signs in with GET /me alone: no console error, no warning in the server log, after a reload too', async () => {
    // A server of its own, as a process, so that its whole log (every source, at warn and above) can be read.
    const db = await createTestDatabase();
    const server = await ChildApp.start({ databaseUrl: db.url, name: 'dashboard-sign-in' });
    try {
      const keys: Array<[string, string, string]> = [['admin', ADMIN_KEY, 'No endpoints yet']];
      for (const [label, scopes, shows] of [
        ['read only', ['webhooks:read'], 'No endpoints yet'],
        ['publish only', ['events:write'], 'This key cannot list endpoints'],
      ] as const) {
        const created = await server.api('/api-keys', { method: 'POST', json: { name: label, scopes } });
        keys.push([label, ((await created.json()) as { key: string }).key, shows]);
      }
      for (const [label, key, shows] of keys) {
        const logged = server.logLines().length;
        const context = await browser.newContext({ viewport: LAPTOP });
        const page = await context.newPage();
        const errors: string[] = [];
        const calls: string[] = [];
        page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
        // Every console error this time, "Failed to load resource" (a 4xx answer) included.
        page.on('console', (message) => {
          if (message.type() === 'error') errors.push(message.text());
        });
        page.on('request', (request) => {
          const url = new URL(request.url());
          if (url.pathname.startsWith('/api/')) calls.push(`${request.method()} ${url.pathname}`);
        });
        await page.goto(`${server.baseUrl}/dashboard`);
        await signIn(page, key);
        await visible(heading(page, 'Endpoints'));
        await visible(page.getByText(shows));
        await page.reload();
        await visible(page.getByText(shows));
        await context.close();

        // A request the server surely logs as a warning (404), after all of the above: once its
        // line is in the log file, so is every line before it.
        const marker = `/api/v1/external/end-of-sign-in-${label.replace(' ', '-')}`;
        expect((await fetch(`${server.baseUrl}${marker}`)).status).toBe(404);
        const isMarker = (line: LogLine) => line.req?.url === marker;
        const lines = await eventually(
          async () => server.logLines().slice(logged) as LogLine[],
          (found) => found.some(isMarker),
          { what: `${marker} in the server log` },
        );
        const warnings = lines.slice(0, lines.findIndex(isMarker)).filter((line) => (line.level ?? 0) >= PINO_WARN);
        expect({ label, errors, warnings }).toEqual({ label, errors: [], warnings: [] });
        expect({ label, signIns: calls.filter((call) => call === 'GET /api/v1/external/me').length }).toEqual({ label, signIns: 2 });
        expect(calls).not.toContain('POST /api/v1/external/webhooks');
      }
    } finally {
      await server.kill('SIGTERM');
      await server.waitForExit(20_000);
      await db.drop();
    }
  }, 120_000);

  it('tells a wrong or revoked key plainly, and ends a session whose key is revoked', async () => {
    const page = await open();
    await signIn(page, 'hl_not_a_real_key_0000000000000000');
    await visible(page.getByRole('alert').getByText('This API key was not accepted: it is unknown or has been revoked.'));
    await visible(heading(page, 'Sign in'));
    await shot(page, 'sign-in-wrong-key-laptop');

    const { id, key } = await createKey(['webhooks:read']);
    await signIn(page, key);
    await visible(heading(page, 'Endpoints'));
    // The list fetches its success rates after the heading shows: revoked before those are in,
    // one of them ends the session, and the link below is gone before it can be clicked.
    // Locators, not waitForFunction: a string predicate that is not yet true is evaluated again by
    // Playwright's polling in the page, which the page's CSP forbids (no eval; Trusted Types). When
    // the list was slow to load (the whole suite running) that failed with an EvalError.
    await page.locator('main [role="status"]').first().waitFor({ state: 'detached' });
    await page.locator('td[data-label="Success rate"]').filter({ hasText: /^…$/ }).first().waitFor({ state: 'detached' });
    expect((await app.api(`/api-keys/${id}`, { method: 'DELETE' })).status).toBe(204);
    await page.getByRole('link', { name: 'Event catalogue' }).click();
    await visible(page.getByRole('alert').getByText('no longer accepted'));
    await visible(heading(page, 'Sign in'));

    await signIn(page, key);
    await visible(page.getByRole('alert').getByText('not accepted'));
  }, 60_000);

  it('shows a key with only webhooks:read the endpoints, and a note instead of what it cannot do', async () => {
    const { id } = await createEndpoint('read-only-view');
    const { key } = await createKey(['webhooks:read']);
    const page = await open();
    await signIn(page, key);
    await visible(page.getByRole('link', { name: 'read-only-view' }));
    await visible(page.getByText('this key can only read', { exact: false }));
    await visible(page.getByText('(needs webhooks:write)', { exact: false }));
    await visible(page.getByText('Read only', { exact: true }));
    expect(await page.getByRole('button', { name: 'New endpoint' }).count()).toBe(0);
    await shot(page, 'endpoints-read-only-laptop');

    await page.getByRole('link', { name: 'read-only-view' }).click();
    await visible(heading(page, 'Deliveries'));
    await visible(
      page.getByText('it cannot edit or delete this endpoint, send it a test event, or retry its deliveries', { exact: false }),
    );
    for (const name of ['Send test event', 'Edit', 'Delete', 'Rotate secret', 'Retry all failed…']) {
      expect(await page.getByRole('button', { name }).count()).toBe(0);
    }
    expect(page.url()).toContain(`#/endpoints/${id}`);
  }, 60_000);

  it('edits, deactivates, tests, rotates, retries failed since a time, filters and deletes an endpoint', async () => {
    receiver.respondStatus(200);
    const { id, secret } = await createEndpoint('manage-me');
    const page = await open(`/dashboard#/endpoints/${id}`);
    await signIn(page, ADMIN_KEY);
    await visible(heading(page, 'manage-me'));

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('dialog', { name: 'Edit endpoint' });
    await form.getByLabel('Name', { exact: true }).fill('managed');
    await form.getByRole('checkbox', { name: /stock\.low/ }).check();
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(heading(page, 'managed'));
    await visible(page.locator('.endpoint-head .chip').getByText('stock.low'));
    // The event-type filter offers the types this endpoint's log can hold, not the whole catalogue.
    await expect(page.getByLabel('Event type').locator('option').allTextContents()).resolves.toEqual([
      'All event types',
      'order.created',
      'stock.low',
      'webhook.test',
    ]);

    await page.getByRole('button', { name: 'Deactivate', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Deactivate', exact: true }).click();
    await visible(page.locator('.endpoint-head .badge-inactive'));
    await page.getByRole('button', { name: 'Activate', exact: true }).click();
    await visible(page.locator('.endpoint-head .badge-active'));

    await page.getByRole('button', { name: 'Send test event' }).click();
    await visible(page.locator('.test-card').getByText('Test event delivered'));
    await visible(page.locator('.test-card').getByText('HTTP 200'));
    await visible(page.locator('tbody tr[data-status="succeeded"]').getByText('webhook.test'));

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = page.getByRole('dialog', { name: 'New signing secret' });
    const newSecret = await shownSecret(rotated);
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    await rotated.getByRole('button', { name: 'I have saved it' }).click();

    receiver.respondStatus(503);
    await publishOrder();
    await visible(page.locator('tbody tr[data-status="failed"]'));
    await page.getByLabel('Status').selectOption('failed');
    await page.locator('tbody tr[data-status="succeeded"]').first().waitFor({ state: 'detached', timeout: UI_DEADLINE });
    // The rows go at once, while the filtered ones load.
    await visible(page.locator('tbody tr[data-status="failed"]'));
    await expect(page.locator('tbody tr').count()).resolves.toBe(1);
    expect(page.url()).toContain('status=failed');
    await page.getByLabel('Event type').selectOption('stock.low');
    await visible(page.getByText('No deliveries match these filters.'));
    await page.getByLabel('Event type').selectOption('');

    receiver.respondStatus(200);
    await page.getByRole('button', { name: 'Retry all failed…' }).click();
    const retryDialog = page.getByRole('dialog', { name: 'Retry failed deliveries' });
    await retryDialog.getByLabel('Only those of events published since (optional)').fill('2020-01-01T00:00');
    await retryDialog.getByRole('button', { name: 'Retry failed deliveries' }).click();
    await visible(page.getByText('1 failed delivery queued for a new attempt.'));
    await page.getByLabel('Status').selectOption('');
    await visible(page.locator('tbody tr[data-status="succeeded"]').getByText('order.created'));

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await visible(heading(page, 'managed'));
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete endpoint' }).click();
    await visible(heading(page, 'Endpoints'));
    await visible(page.getByText('Deleted managed.'));
    expect((await app.api(`/webhooks/${id}`)).status).toBe(404);
  }, 60_000);

  it("shows an endpoint's custom headers (a credential as set, never shown; others masked until revealed) and retry schedule, and edits both", async () => {
    receiver.respondStatus(200);
    const token = 'Bearer s3cr3t-t0ken';
    const created = await app.api('/webhooks', {
      method: 'POST',
      json: {
        name: 'with-settings',
        url: `${receiver.url}/with-settings`,
        events: ['stock.low'],
        headers: { Authorization: token, 'X-Store': 'berlin-1' },
        retrySchedule: [0, 5_000, 300_000, 1_800_000],
      },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    /** The headers of a test delivery as the receiver gets them. */
    const sentHeaders = async () => {
      expect((await app.api(`/webhooks/${id}/test`, { method: 'POST' })).status).toBe(200);
      return receiver.to('/with-settings').at(-1)!.headers;
    };
    const page = await open(`/dashboard#/endpoints/${id}`);
    const puts: unknown[] = [];
    page.on('request', (request) => {
      if (request.method() === 'PUT') puts.push(request.postDataJSON());
    });
    await signIn(page, ADMIN_KEY);
    await visible(heading(page, 'with-settings'));

    const settings = page.locator('dl.settings dd').first();
    const schedule = page.locator('dl.settings dd').nth(1);
    await expect(schedule.innerText()).resolves.toBe('0, 5 s, 5 min, 30 min (4 attempts)');
    await expect(settings.locator('.header-name').allTextContents()).resolves.toEqual(['Authorization', 'X-Store']);
    // The credential reads "set" and has nothing to reveal; the other value is not in the page until asked for.
    await expect(settings.locator('li[data-sensitive] .header-set').allInnerTexts()).resolves.toEqual(['set · never shown']);
    expect(await settings.locator('li[data-sensitive] button').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Show the value of Authorization' }).count()).toBe(0);
    expect(await page.content()).not.toContain('s3cr3t');
    expect(await page.content()).not.toContain('berlin-1');
    await expect(settings.locator('.header-value > [aria-hidden="true"]').allTextContents()).resolves.toEqual(['••••••••']);
    await page.getByRole('button', { name: 'Show the value of X-Store' }).click();
    await visible(settings.getByText('berlin-1', { exact: true }));
    await shot(page, 'endpoint-settings-laptop');
    await page.getByRole('button', { name: 'Hide the value of X-Store' }).click();
    await settings.getByText('berlin-1', { exact: true }).waitFor({ state: 'detached', timeout: UI_DEADLINE });

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('dialog', { name: 'Edit endpoint' });
    const names = form.getByLabel('Header', { exact: true });
    const values = form.getByLabel('Value', { exact: true });
    await expect(names.evaluateAll((inputs) => inputs.map((input) => (input as unknown as { value: string }).value))).resolves.toEqual([
      'Authorization',
      'X-Store',
    ]);
    // The stored credential is not in the form either: an empty value that keeps it.
    await expect(values.first().getAttribute('type')).resolves.toBe('password');
    await expect(values.first().inputValue()).resolves.toBe('');
    await expect(values.first().getAttribute('placeholder')).resolves.toMatch(/^Set – leave empty to keep/);
    await expect(values.nth(1).inputValue()).resolves.toBe('berlin-1');
    await expect(names.first().getAttribute('maxlength')).resolves.toBe('256');
    await visible(form.getByText('8 KiB in all', { exact: false }));
    expect(await page.content()).not.toContain('s3cr3t');
    await expect(form.getByLabel('Retry schedule').inputValue()).resolves.toBe('0, 5 s, 5 min, 30 min');
    await form.getByRole('button', { name: 'Remove header' }).nth(1).click();
    await form.getByRole('button', { name: 'Add header' }).click();
    await names.last().fill('X-Tenant');
    await values.last().fill('acme');
    await form.getByLabel('Show values').check();
    await expect(values.last().getAttribute('type')).resolves.toBe('text');
    // Renamed, the credential's row needs its value typed again: the stored one stays with the old name.
    await names.first().fill('X-Api-Key');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(form.getByRole('alert').getByText('give X-Api-Key a value', { exact: false }));
    expect(puts).toEqual([]);
    await names.first().fill('Authorization');
    // A schedule the API refuses: its message shows under the field, and nothing changes.
    await form.getByLabel('Retry schedule').fill('5 s, 1 min');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(form.locator('#ep-schedule-error').getByText('retrySchedule must start with 0'));
    await expect(form.getByLabel('Retry schedule').getAttribute('aria-invalid')).resolves.toBe('true');
    await form.getByLabel('Retry schedule').fill('0, 1 min, 2h');
    await shot(page, 'endpoint-settings-form-laptop');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(schedule.getByText('0, 1 min, 2 h', { exact: true }));
    await expect(schedule.innerText()).resolves.toBe('0, 1 min, 2 h (3 attempts)');
    await expect(settings.locator('.header-name').allTextContents()).resolves.toEqual(['Authorization', 'X-Tenant']);
    await expect(settings.locator('li[data-sensitive] .header-name').allTextContents()).resolves.toEqual(['Authorization']);
    await expect(settings.locator('.header-value > [aria-hidden="true"]').allTextContents()).resolves.toEqual(['••••••••']);
    // The empty value was sent as null, which keeps the stored credential: the receiver still gets it.
    expect(puts.at(-1)).toMatchObject({ headers: { Authorization: null, 'X-Tenant': 'acme' } });
    const saved = (await (await app.api(`/webhooks/${id}`)).json()) as {
      headers: Record<string, string | null>;
      retrySchedule: number[] | null;
    };
    expect(saved).toMatchObject({ headers: { Authorization: null, 'X-Tenant': 'acme' }, retrySchedule: [0, 60_000, 7_200_000] });
    await expect(sentHeaders()).resolves.toMatchObject({ authorization: token, 'x-tenant': 'acme' });

    // A value typed over it replaces it; the schedule back to the deployment's.
    const replaced = 'Bearer n3w-t0ken';
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await expect(values.first().inputValue()).resolves.toBe('');
    await values.first().fill(replaced);
    await form.getByLabel('Retry schedule').fill('');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(schedule.getByText('The standard schedule'));
    await expect(schedule.innerText()).resolves.toBe('The standard schedule (the same for every endpoint without its own)');
    await expect((await app.api(`/webhooks/${id}`)).json()).resolves.toMatchObject({
      retrySchedule: null,
      headers: { Authorization: null },
    });
    const received = await sentHeaders();
    expect(received).toMatchObject({ authorization: replaced, 'x-tenant': 'acme' });
    expect(await page.content()).not.toContain('n3w-t0ken');
  }, 60_000);

  it("shows an endpoint's rate limit and order, and edits both", async () => {
    const created = await app.api('/webhooks', {
      method: 'POST',
      json: { name: 'paced', url: `${receiver.url}/paced`, events: ['stock.low'], rateLimitPerSecond: 20, ordered: true },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const page = await open(`/dashboard#/endpoints/${id}`);
    await signIn(page, ADMIN_KEY);
    await visible(heading(page, 'paced'));
    const pace = page.locator('dl.settings dd').nth(2);
    await expect(pace.innerText()).resolves.toBe('At most 20 attempts a second · ordered, one at a time');

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('dialog', { name: 'Edit endpoint' });
    await expect(form.getByLabel('Rate limit (attempts per second)').inputValue()).resolves.toBe('20');
    await expect(form.getByLabel(/^Ordered/).isChecked()).resolves.toBe(true);
    // A limit the API refuses: its message shows in the form, and nothing changes.
    await form.getByLabel('Rate limit (attempts per second)').fill('20000');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(form.getByRole('alert').getByText('The rate limit must be a whole number from 1 to 10000, or empty for none.'));
    await form.getByLabel('Rate limit (attempts per second)').fill('');
    await form.getByLabel(/^Ordered/).uncheck();
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(pace.getByText('No rate limit', { exact: true }));
    await expect((await app.api(`/webhooks/${id}`)).json()).resolves.toMatchObject({ rateLimitPerSecond: null, ordered: false });
  }, 60_000);

  it('shows why an endpoint is disabled, and since when: a 410 Gone answer, then by hand', async () => {
    receiver.respondWith((request, res) => {
      res.writeHead(request.path === '/gone-away' ? 410 : 200);
      res.end();
    });
    const { id } = await createEndpoint('gone-away');
    const page = await open(`/dashboard#/endpoints/${id}`);
    await signIn(page, ADMIN_KEY);
    await visible(heading(page, 'gone-away'));
    await visible(page.locator('.endpoint-head .badge-active'));
    const reason = page.locator('.endpoint-head .note-warn');
    expect(await reason.count()).toBe(0);

    // The page polls the endpoint: the 410 disables it while it is open.
    await publishOrder();
    await visible(reason.getByText('Disabled: its server said this address is gone for good'));
    // A sentence where a store owner reads, not an HTTP status or a setting's variable name.
    await expect(page.locator('.endpoint-head').innerText()).resolves.not.toMatch(/410|Gone\b|[A-Z]{3,}_[A-Z_]{3,}/);
    await visible(page.locator('.endpoint-head .badge-inactive'));
    const gone = (await (await app.api(`/webhooks/${id}`)).json()) as { disabledReason: string; disabledAt: string };
    expect(gone.disabledReason).toBe('gone');
    await expect(reason.locator('time').getAttribute('datetime')).resolves.toBe(gone.disabledAt);
    await visible(page.locator('tbody tr[data-status="failed"]').getByText('HTTP 410'));
    await shot(page, 'endpoint-gone-laptop');

    await page.getByRole('button', { name: 'Activate', exact: true }).click();
    await visible(page.locator('.endpoint-head .badge-active'));
    expect(await reason.count()).toBe(0);
    await page.getByRole('button', { name: 'Deactivate', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Deactivate', exact: true }).click();
    await visible(reason.getByText('Disabled by hand'));
    await page.getByRole('link', { name: 'Endpoints', exact: true }).first().click();
    await visible(page.locator('tr', { has: page.getByRole('link', { name: 'gone-away' }) }).getByText('by hand'));
    // The dialogs' hints too.
    await page.getByRole('link', { name: 'gone-away' }).click();
    await page.getByRole('button', { name: 'Activate', exact: true }).click();
    await page.getByRole('button', { name: 'Retry all failed…' }).click();
    await visible(page.getByRole('dialog').getByText('as many attempts as a delivery may have stays failed', { exact: false }));
    await expect(page.getByRole('dialog').innerText()).resolves.not.toMatch(/[A-Z]{3,}_[A-Z_]{3,}/);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Replay…' }).click();
    await visible(page.getByRole('dialog').getByText('Events older than the time they are kept for are gone', { exact: false }));
    await expect(page.getByRole('dialog').innerText()).resolves.not.toMatch(/[A-Z]{3,}_[A-Z_]{3,}/);
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
  }, 60_000);

  it('shows a disabled endpoint with its reason and date, re-enables it from its page and replays the events it missed to the receiver', async () => {
    receiver.respondStatus(200);
    const { id, secret } = await createEndpoint('replay-me');
    await publishOrder();
    await receiver.waitFor(1, (request) => request.path === '/replay-me');
    const paused = (await (await app.api(`/webhooks/${id}`, { method: 'PUT', json: { isActive: false } })).json()) as {
      disabledAt: string;
    };
    await publishOrder();
    await publishOrder();

    const page = await open('/dashboard');
    await signIn(page, ADMIN_KEY);
    const row = page.locator('tr', { has: page.getByRole('link', { name: 'replay-me' }) });
    await visible(row.locator('.disabled-reason').getByText('by hand'));
    await expect(row.locator('.disabled-reason time').getAttribute('datetime')).resolves.toBe(paused.disabledAt);
    await row.getByRole('link', { name: 'replay-me' }).click();
    await visible(heading(page, 'replay-me'));
    const reason = page.locator('.endpoint-head .note-warn');
    await visible(reason.getByText('Disabled by hand'));
    await expect(reason.locator('time').getAttribute('datetime')).resolves.toBe(paused.disabledAt);
    // A replay needs an active endpoint: the button waits for the activation.
    await expect(page.getByRole('button', { name: 'Replay…', exact: true }).isDisabled()).resolves.toBe(true);

    await page.getByRole('button', { name: 'Activate', exact: true }).click();
    await visible(page.locator('.endpoint-head .badge-active'));
    expect(await reason.count()).toBe(0);
    await expect((await app.api(`/webhooks/${id}`)).json()).resolves.toMatchObject({
      isActive: true,
      disabledReason: null,
      disabledAt: null,
    });
    const offer = page.locator('.endpoint-head .note-info', { hasText: 'were not delivered to it' });
    await expect(offer.locator('time').getAttribute('datetime')).resolves.toBe(paused.disabledAt);
    await shot(page, 'endpoint-replay-offer-laptop');

    const sent: unknown[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/replay')) sent.push(request.postDataJSON());
    });
    await offer.getByRole('button', { name: 'Replay them…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replay missed events' });
    // The window starts at the second it was disabled, in local time.
    const since = await dialog.getByLabel('Events published since').inputValue();
    expect(new Date(since).getTime()).toBe(Math.floor(Date.parse(paused.disabledAt) / 1000) * 1000);
    await shot(page, 'replay-dialog-laptop');
    await dialog.getByRole('button', { name: 'Replay events' }).click();
    await visible(page.locator('.endpoint-head').getByText('Replay queued 2 deliveries.'));
    expect(sent).toEqual([{ since: new Date(since).toISOString() }]);
    expect(await offer.count()).toBe(0);

    const arrived = await receiver.waitFor(3, (request) => request.path === '/replay-me');
    for (const request of arrived) expect(verifyWebhook(secret, request.headers, request.body).type).toBe('order.created');
    expect(new Set(arrived.map((request) => request.headers['x-webhook-id'])).size).toBe(3);
    await eventually(
      () => page.locator('tbody tr[data-status="succeeded"]').count(),
      (count) => count === 3,
      { what: 'three succeeded deliveries in the log' },
    );

    // Again, from the toolbar, over the same window: nothing is missing any more.
    await page.getByRole('button', { name: 'Replay…', exact: true }).click();
    await expect(dialog.getByLabel('Events published since').inputValue()).resolves.toBe('');
    await dialog.getByLabel('Events published since').fill(since);
    await dialog.getByRole('button', { name: 'Replay events' }).click();
    await visible(page.locator('.endpoint-head').getByText(/^Replay queued 0 deliveries/));
    expect(receiver.to('/replay-me')).toHaveLength(3);
  }, 60_000);

  it('rotates with a 24 h overlap, sending it, and shows until when the previous secret signs', async () => {
    const { id, secret } = await createEndpoint('rotate-overlap', ['stock.low']);
    const page = await open(`/dashboard#/endpoints/${id}`);
    const sent: unknown[] = [];
    page.on('request', (request) => {
      if (request.url().endsWith('/rotate-secret')) sent.push(request.postDataJSON());
    });
    await signIn(page, ADMIN_KEY);
    await visible(heading(page, 'rotate-overlap'));
    const overlap = page.locator('.endpoint-head .note-info');
    expect(await overlap.count()).toBe(0);

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const ask = page.getByRole('dialog', { name: 'Rotate the signing secret' });
    await ask.getByRole('radio', { name: '1 hour' }).check();
    await ask.getByRole('radio', { name: '24 hours' }).check();
    await shot(page, 'rotate-overlap-laptop');
    const before = Date.now();
    await ask.getByRole('button', { name: 'Rotate secret' }).click();
    const shown = page.getByRole('dialog', { name: 'New signing secret' });
    const rotated = await shownSecret(shown);
    const after = Date.now();
    expect(rotated).not.toBe(secret);
    expect(sent).toEqual([{ oldSecretExpiresInSeconds: 86_400 }]);
    await shown.getByRole('button', { name: 'I have saved it' }).click();
    // Closed at once, but taken out of the page only by its close event, a moment later.
    await page.locator('dialog').waitFor({ state: 'detached', timeout: UI_DEADLINE });

    await visible(overlap.getByText('Previous secret valid until'));
    const webhook = (await (await app.api(`/webhooks/${id}`)).json()) as { secretRotation: { oldSecretExpiresAt: string } | null };
    const until = webhook.secretRotation!.oldSecretExpiresAt;
    await expect(overlap.locator('time').getAttribute('datetime')).resolves.toBe(until);
    expect(Date.parse(until)).toBeGreaterThanOrEqual(before + 86_400_000 - 1_000);
    expect(Date.parse(until)).toBeLessThanOrEqual(after + 86_400_000 + 1_000);
    expect(await page.content()).not.toContain(rotated);
    await shot(page, 'endpoint-overlap-laptop');

    // Rotating again during the overlap is warned about; with no overlap, none is left to show.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await visible(ask.getByText('overlap is still running'));
    await ask.getByRole('radio', { name: /^None/ }).check();
    await ask.getByRole('button', { name: 'Rotate secret' }).click();
    await shown.getByRole('button', { name: 'I have saved it' }).click();
    await overlap.first().waitFor({ state: 'detached', timeout: UI_DEADLINE });
    expect(sent).toEqual([{ oldSecretExpiresInSeconds: 86_400 }, { oldSecretExpiresInSeconds: 0 }]);
  }, 60_000);

  it('shows what the API refused in an edit form scrolled to its top, beside Save, and saves nothing', async () => {
    const { id } = await createEndpoint('refused-edit', ['stock.low']);
    const page = await open(`/dashboard#/endpoints/${id}`);
    await signIn(page, ADMIN_KEY);
    await visible(heading(page, 'refused-edit'));
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('dialog', { name: 'Edit endpoint' });
    await form.getByLabel('Rate limit (attempts per second)').fill('20000');
    await form.getByLabel('Name', { exact: true }).fill('renamed');
    await form.locator('.dialog-body').evaluate((body) => ((body as unknown as { scrollTop: number }).scrollTop = 0));
    await form.getByRole('button', { name: 'Save changes' }).click();

    const alert = form.getByRole('alert').getByText(/from 1 to 10000/);
    await visible(alert);
    // Seen where it is: the element drawn at its middle is the message itself, not the form over it.
    const seen = await alert.evaluate((node) => {
      type Box = { left: number; top: number; width: number; height: number };
      const element = node as unknown as {
        getBoundingClientRect(): Box;
        contains(other: unknown): boolean;
        ownerDocument: { elementFromPoint(x: number, y: number): unknown };
      };
      const box = element.getBoundingClientRect();
      const top = element.ownerDocument.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
      return Boolean(top) && element.contains(top);
    });
    expect(seen).toBe(true);
    await expect(form.locator('.dialog-body').evaluate((body) => (body as unknown as { scrollTop: number }).scrollTop)).resolves.toBe(0);
    await shot(page, 'edit-refused-laptop');
    await expect((await app.api(`/webhooks/${id}`)).json()).resolves.toMatchObject({ name: 'refused-edit', rateLimitPerSecond: null });
  }, 60_000);

  it('asks before sending a delivery that succeeded again, saying the receiver gets the same event id twice', async () => {
    receiver.respondStatus(200);
    const { id } = await createEndpoint('resend-ok');
    await publishOrder();
    await receiver.waitFor(1, (request) => request.path === '/resend-ok');
    const list = (await (await app.api(`/webhooks/${id}/deliveries`)).json()) as { data: Array<{ id: string; status: string }> };
    const delivery = list.data[0];
    await eventually(
      async () => ((await (await app.api(`/deliveries/${delivery.id}`)).json()) as { status: string }).status,
      (status) => status === 'succeeded',
      { what: 'the delivery succeeded' },
    );
    const page = await open(`/dashboard#/deliveries/${delivery.id}`);
    await signIn(page, ADMIN_KEY);
    await visible(page.locator('.endpoint-head [data-status="succeeded"]'));

    await page.getByRole('button', { name: 'Retry delivery' }).click();
    const ask = page.getByRole('dialog', { name: 'Send this delivery again?' });
    await visible(ask.getByText('with the same event id, a second time'));
    await shot(page, 'resend-confirm-laptop');
    await ask.getByRole('button', { name: 'Cancel' }).click();
    await ask.waitFor({ state: 'detached', timeout: UI_DEADLINE });
    await expect((await app.api(`/deliveries/${delivery.id}`)).json()).resolves.toMatchObject({ attemptCount: 1 });

    await page.getByRole('button', { name: 'Retry delivery' }).click();
    await ask.getByRole('button', { name: 'Send it again' }).click();
    await visible(heading(page, 'Attempts (2)'));
    const sent = await receiver.waitFor(2, (request) => request.path === '/resend-ok');
    expect(sent[1].headers['webhook-id']).toBe(sent[0].headers['webhook-id']);
  }, 60_000);

  it('shows an active endpoint whose deliveries fail as Failing, not as a healthy Active, in the list and on its page', async () => {
    receiver.respondStatus(500);
    const { id } = await createEndpoint('always-failing');
    await publishOrder();
    await eventually(
      async () => ((await (await app.api(`/webhooks/${id}/deliveries`)).json()) as { data: Array<{ status: string }> }).data,
      (data) => data.length === 1 && data[0].status === 'failed',
      { what: 'the delivery failed' },
    );
    const page = await open('/dashboard');
    await signIn(page, ADMIN_KEY);
    const row = page.locator('tr', { has: page.getByRole('link', { name: 'always-failing' }) });
    await visible(row.locator('.badge-failing').getByText('Failing'));
    await expect(row.locator('.badge-active').count()).resolves.toBe(0);
    await expect(row.locator('.badge-failing').getAttribute('title')).resolves.toBe(
      'Active, but 1 of its latest 1 finished deliveries failed',
    );
    await shot(page, 'endpoints-failing-laptop');

    await row.getByRole('link', { name: 'always-failing' }).click();
    await visible(page.locator('.endpoint-head .badge-failing'));
    await expect(page.locator('.endpoint-head .badge-active').count()).resolves.toBe(0);
    receiver.respondStatus(200);
  }, 60_000);

  it('shows only the rows of the last filters when two change quickly, even when the first answer comes last', async () => {
    receiver.respondStatus(500);
    const { id } = await createEndpoint('two-filters');
    for (let i = 0; i < 3; i += 1) await publishOrder();
    for (let i = 0; i < 2; i += 1) expect((await app.api(`/webhooks/${id}/test`, { method: 'POST' })).status).toBe(200);
    await eventually(
      async () => ((await (await app.api(`/webhooks/${id}/deliveries`)).json()) as { data: Array<{ status: string }> }).data,
      (data) => data.length === 5 && data.every((delivery) => delivery.status === 'failed'),
      { what: 'five failed deliveries' },
    );
    const page = await open(`/dashboard#/endpoints/${id}`);
    // A slow server for the first filter alone: its answer comes after the second's.
    await page.route(/\/deliveries\?/, async (route) => {
      const query = new URL(route.request().url()).searchParams;
      if (query.get('status') === 'failed' && !query.get('eventType')) await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue().catch(() => undefined);
    });
    await signIn(page, ADMIN_KEY);
    await visible(page.locator('tbody tr'));
    await page.locator('#filter-status').selectOption('failed');
    await page.locator('#filter-event').selectOption('webhook.test');

    // Watched until well after the slow answer: every row shown is one of the last filters'.
    const seen = new Set<string>();
    const until = Date.now() + 3000;
    while (Date.now() < until) {
      const shown = await page.locator('tbody tr td[data-label="Event"] a').allTextContents();
      shown.forEach((type) => seen.add(type));
      expect(shown.filter((type) => type !== 'webhook.test')).toEqual([]);
    }
    expect([...seen]).toEqual(['webhook.test']);
    await expect(page.locator('tbody tr').count()).resolves.toBe(2);
    receiver.respondStatus(200);
  }, 60_000);

  it('finds an event by its id with its deliveries, a delivery by its id, and says plainly when an id is unknown', async () => {
    receiver.respondStatus(200);
    const { id } = await createEndpoint('searched');
    const published = await app.api('/events', { method: 'POST', json: { type: 'order.created', data: orderData } });
    const eventId = ((await published.json()) as { id: string }).id;
    const [delivery] = await eventually(
      async () => ((await (await app.api(`/webhooks/${id}/deliveries`)).json()) as { data: Array<{ id: string; status: string }> }).data,
      (data) => data.length === 1 && data[0].status === 'succeeded',
      { what: 'the delivery succeeded' },
    );
    const page = await open('/dashboard');
    await signIn(page, ADMIN_KEY);
    const search = page.getByRole('search').getByLabel('Event or delivery id');
    const message = page.locator('#search-message');

    await search.fill(eventId);
    await search.press('Enter');
    await visible(heading(page, 'order.created'));
    expect(new URL(page.url()).hash).toBe(`#/events/${eventId}`);
    const row = page.locator('tbody tr', { has: page.getByRole('link', { name: 'searched' }) });
    await visible(row.locator('.badge-succeeded'));
    await shot(page, 'event-found-laptop');
    await row.getByRole('link', { name: 'searched' }).click();
    await page.waitForURL(`**#/deliveries/${delivery.id}`);

    await search.fill(delivery.id);
    await page.getByRole('search').getByRole('button', { name: 'Find' }).click();
    await visible(page.locator('.facts').getByText(delivery.id));

    await search.fill('evt_00000000000000000000000000');
    await search.press('Enter');
    await visible(message.getByText('No event has the id evt_00000000000000000000000000 here. Check that it was copied whole.'));
    await search.fill('del_nothing');
    await search.press('Enter');
    await visible(message.getByText('No delivery has the id del_nothing here. Check that it was copied whole.'));
    await search.fill('ord_1001');
    await search.press('Enter');
    await visible(message.getByText('Enter an event id (it starts with evt_) or a delivery id (del_).'));
    await shot(page, 'search-unknown-laptop');
    expect(new URL(page.url()).hash).toBe(`#/deliveries/${delivery.id}`);
  }, 60_000);

  it('shows Loading… while a page and its deliveries are fetched, never a blank page', async () => {
    receiver.respondStatus(200);
    const { id } = await createEndpoint('slow-to-load');
    await publishOrder();
    const page = await open('/dashboard');
    await signIn(page, ADMIN_KEY);
    await visible(page.getByRole('link', { name: 'slow-to-load' }));
    // The endpoint and then its deliveries are held until the placeholders have been seen.
    let releaseEndpoint!: () => void;
    let releaseDeliveries!: () => void;
    const endpointHeld = new Promise<void>((resolve) => (releaseEndpoint = resolve));
    const deliveriesHeld = new Promise<void>((resolve) => (releaseDeliveries = resolve));
    await page.route(new RegExp(`/webhooks/${id}$`), async (route) => {
      await endpointHeld;
      await route.continue().catch(() => undefined);
    });
    await page.route(new RegExp(`/webhooks/${id}/deliveries\\?`), async (route) => {
      await deliveriesHeld;
      await route.continue().catch(() => undefined);
    });
    await page.getByRole('link', { name: 'slow-to-load' }).click();
    const loading = page.locator('.view[aria-busy="true"] .view-loading[role="status"]');
    await visible(loading.getByText('Loading…'));
    await shot(page, 'loading-laptop');
    releaseEndpoint();
    await visible(heading(page, 'slow-to-load'));
    await expect(loading.count()).resolves.toBe(0);
    await visible(page.locator('table.deliveries[aria-busy="true"]'));
    await visible(page.getByText('Loading deliveries…'));
    releaseDeliveries();
    await visible(page.locator('tbody tr[data-status="succeeded"]'));
    await expect(page.locator('table.deliveries[aria-busy="true"]').count()).resolves.toBe(0);
    await expect(page.getByText('Loading deliveries…').isVisible()).resolves.toBe(false);
  }, 60_000);

  it('draws a chart of the latest deliveries over time on the endpoint page, by status, from the deliveries it lists', async () => {
    receiver.respondStatus(200);
    const { id } = await createEndpoint('charted');
    for (let i = 0; i < 3; i += 1) await publishOrder();
    await eventually(
      async () => ((await (await app.api(`/webhooks/${id}/deliveries`)).json()) as { data: Array<{ status: string }> }).data,
      (data) => data.length === 3 && data.every((delivery) => delivery.status === 'succeeded'),
      { what: 'three succeeded deliveries' },
    );
    receiver.respondStatus(500);
    for (let i = 0; i < 2; i += 1) await publishOrder();
    await eventually(
      async () => ((await (await app.api(`/webhooks/${id}/deliveries`)).json()) as { data: Array<{ status: string }> }).data,
      (data) => data.length === 5 && data.filter((delivery) => delivery.status === 'failed').length === 2,
      { what: 'two failed deliveries more' },
    );
    const page = await open(`/dashboard#/endpoints/${id}`);
    await signIn(page, ADMIN_KEY);
    const chart = page.getByRole('img', { name: /^Latest deliveries over time/ });
    await visible(chart);
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(
      /5 deliveries since .*: 3 succeeded, 2 failed, 0 pending\. Response time of their last attempts: median \d+ ms, 95th percentile \d+ ms\.$/,
    );
    const bars = chart.locator('g.chart-bar');
    await expect(bars.count()).resolves.toBe(12);
    // Every delivery is in one bar, each bar's title counting its own.
    const titles = await bars.locator('title').allTextContents();
    const total = (status: string) => titles.reduce((sum, text) => sum + Number(new RegExp(`(\\d+) ${status}`).exec(text)?.[1] ?? 0), 0);
    expect([total('succeeded'), total('failed'), total('pending')]).toEqual([3, 2, 0]);
    await expect(chart.locator('rect.chart-succeeded').count()).resolves.toBeGreaterThan(0);
    await expect(chart.locator('rect.chart-failed').count()).resolves.toBeGreaterThan(0);
    // Coloured by the stylesheet: the CSP allows no inline style.
    const fill = (rect: Locator) =>
      rect.evaluate(
        (element) => (globalThis as unknown as { getComputedStyle(e: unknown): { fill: string } }).getComputedStyle(element).fill,
      );
    const failedFill = await fill(chart.locator('rect.chart-failed').first());
    expect(failedFill).not.toBe(await fill(chart.locator('rect.chart-succeeded').first()));
    expect(failedFill).not.toBe('rgb(0, 0, 0)');
    await shot(page, 'endpoint-chart-laptop');
    receiver.respondStatus(200);
  }, 60_000);

  it("shows each delivery's response time in the list, and the median and 95th percentile over time in the chart", async () => {
    // The receiver answers the endpoint's first two requests after 300 ms and the third after 900 ms.
    const [FAST_MS, SLOW_MS] = [300, 900];
    let answered = 0;
    receiver.respondWith((request, res) => {
      const delay = request.path === '/timed' && (answered += 1) === 3 ? SLOW_MS : FAST_MS;
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"received":true}');
      }, delay);
    });
    const { id } = await createEndpoint('timed');
    const published = Date.now();
    for (let i = 0; i < 3; i += 1) await publishOrder();
    type Listed = { id: string; status: string; lastDurationMs: number | null };
    const deliveries = await eventually(
      async () => ((await (await app.api(`/webhooks/${id}/deliveries`)).json()) as { data: Listed[] }).data,
      (data) => data.length === 3 && data.every((delivery) => delivery.status === 'succeeded'),
      { what: 'three succeeded deliveries' },
    );
    const took = Date.now() - published;
    const durations = deliveries.map((delivery) => delivery.lastDurationMs!).sort((a, b) => a - b);
    // Each is the receiver's delay and no less, and no more than the whole wait for all three.
    expect(durations[0]).toBeGreaterThanOrEqual(FAST_MS);
    expect(durations[1]).toBeGreaterThanOrEqual(FAST_MS);
    expect(durations[1]).toBeLessThan(SLOW_MS);
    expect(durations[2]).toBeGreaterThanOrEqual(SLOW_MS);
    expect(durations[2]).toBeLessThanOrEqual(took);

    const page = await open(`/dashboard#/endpoints/${id}`);
    await signIn(page, ADMIN_KEY);
    await visible(page.locator('tbody tr[data-status="succeeded"]'));
    await expect(page.getByRole('columnheader', { name: 'Response time' }).count()).resolves.toBe(1);
    // Every row shows its own delivery's last duration, as the API gives it.
    const shown = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`);
    for (const delivery of deliveries) {
      await expect(page.locator(`tr[data-id="${delivery.id}"] td[data-label="Response time"]`).textContent()).resolves.toBe(
        shown(delivery.lastDurationMs!),
      );
    }

    const chart = page.getByRole('img', { name: /^Latest deliveries over time/ });
    await visible(chart);
    // Nearest rank of three: the median is the middle one, the 95th percentile the slowest.
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(
      new RegExp(`Response time of their last attempts: median ${shown(durations[1])}, 95th percentile ${shown(durations[2])}\\.$`),
    );
    const titles = await chart.locator('g.chart-bar title').allTextContents();
    expect(titles.filter((text) => text.includes('; response time median ')).length).toBeGreaterThan(0);
    expect(titles.some((text) => text.endsWith(`95th percentile ${shown(durations[2])}`))).toBe(true);
    await expect(chart.locator('circle.chart-median').count()).resolves.toBeGreaterThan(0);
    await expect(chart.locator('circle.chart-p95').count()).resolves.toBeGreaterThan(0);
    await shot(page, 'endpoint-response-times-laptop', true);
    receiver.respondStatus(200);
  }, 60_000);

  it('draws the Active badge and JSON numbers at WCAG AA contrast (4.5:1) in light and dark mode', async () => {
    receiver.respondStatus(200);
    const { id } = await createEndpoint('contrast');
    await publishOrder();
    const [delivery] = (
      await eventually(
        async () => ((await (await app.api(`/webhooks/${id}/deliveries`)).json()) as { data: Array<{ id: string }> }).data,
        (data) => data.length === 1,
      )
    ).map(({ id: deliveryId }) => deliveryId);
    /** The contrast of an element's text on the first background behind it that is not transparent. */
    const contrast = async (page: Page, selector: string): Promise<number> => {
      // Looked up inside the page at once: a polling view may replace the element between two calls.
      const colours = await page.evaluate((selector) => {
        type Styled = { parentElement: Styled | null };
        const view = globalThis as unknown as {
          document: { querySelector(selector: string): Styled | null };
          getComputedStyle(element: Styled): { color: string; backgroundColor: string };
        };
        const node = view.document.querySelector(selector);
        const behind: string[] = [];
        for (let element = node; element; element = element.parentElement) behind.push(view.getComputedStyle(element).backgroundColor);
        return { color: node ? view.getComputedStyle(node).color : '', behind };
      }, selector);
      const channels = (css: string) => (css.match(/[\d.]+/g) ?? []).map(Number);
      const background = colours.behind.find((css) => channels(css).length === 3 || channels(css)[3] === 1) ?? 'rgb(255, 255, 255)';
      const luminance = (css: string) => {
        const [r, g, b] = channels(css).map((value) => {
          const c = value / 255;
          return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
        });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b;
      };
      const [light, dark] = [luminance(colours.color), luminance(background)].sort((a, b) => b - a);
      const ratio = (light + 0.05) / (dark + 0.05);
      if (Number.isNaN(ratio)) throw new Error(`unreadable colours ${JSON.stringify(colours)}`);
      return ratio;
    };
    for (const colorScheme of ['light', 'dark'] as const) {
      const page = await open(`/dashboard#/endpoints/${id}`, { colorScheme });
      await signIn(page, ADMIN_KEY);
      await visible(page.locator('.endpoint-head .badge-active'));
      expect(await contrast(page, '.endpoint-head .badge-active')).toBeGreaterThanOrEqual(4.5);
      await page.goto(`${app.baseUrl}/dashboard#/deliveries/${delivery}`);
      await visible(page.locator('.json .j-num'));
      expect(await contrast(page, '.json .j-num')).toBeGreaterThanOrEqual(4.5);
    }
  }, 60_000);

  it('keeps the once-only secret on screen through Escape and a click outside, until "I have saved it"', async () => {
    const { id } = await createEndpoint('keep-secret', ['stock.low']);
    const page = await open(`/dashboard#/endpoints/${id}`);
    await signIn(page, ADMIN_KEY);
    await visible(heading(page, 'keep-secret'));
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog', { name: 'Rotate the signing secret' }).getByRole('button', { name: 'Rotate secret' }).click();
    const shown = page.getByRole('dialog', { name: 'New signing secret' });
    const secret = await shownSecret(shown);

    await page.keyboard.press('Escape');
    await page.keyboard.press('Escape');
    await page.mouse.click(4, 4);
    await visible(shown.getByText('The secret is shown only here.'));
    expect(await shownSecret(shown)).toBe(secret);
    await expect(page.locator(':focus').textContent()).resolves.toBe('I have saved it');
    await shot(page, 'secret-kept-laptop');

    await shown.getByRole('button', { name: 'I have saved it' }).click();
    await page.locator('dialog').waitFor({ state: 'detached', timeout: UI_DEADLINE });
    expect(await page.content()).not.toContain(secret);
  }, 60_000);

  it('can be used from the keyboard: sign in with Enter, dialogs open and close, focus returns and shows', async () => {
    const page = await open();
    await page.getByLabel('API key').focus();
    await page.keyboard.type(ADMIN_KEY);
    await page.keyboard.press('Enter');
    await visible(heading(page, 'Endpoints'));
    await page.keyboard.press('Tab');
    await expect(page.locator(':focus').textContent()).resolves.toBe('New endpoint');
    await expect(page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle')).resolves.not.toBe('none');

    await page.keyboard.press('Enter');
    const form = page.getByRole('dialog', { name: 'New endpoint' });
    await visible(form);
    await expect(page.locator(':focus').getAttribute('id')).resolves.toBe('ep-name');
    await page.keyboard.press('Escape');
    await form.waitFor({ state: 'detached', timeout: UI_DEADLINE });
    await expect(page.locator(':focus').textContent()).resolves.toBe('New endpoint');
  }, 60_000);

  it('shows the event catalogue by category, each type with its data shape and an example', async () => {
    const page = await open('/dashboard#/catalogue');
    await signIn(page, ADMIN_KEY);
    await visible(heading(page, 'Event catalogue'));
    await visible(page.locator('.type-card'));
    await expect(page.locator('.type-card').count()).resolves.toBe(20);
    await expect(page.locator('section.category > h2').allTextContents()).resolves.toEqual([
      'Orders',
      'Payments',
      'Products',
      'Inventory',
      'Customers',
      'Deliveries',
      'Webhooks',
    ]);
    const card = page.locator('article', { has: page.getByRole('heading', { name: 'order.created' }) });
    await visible(card.getByRole('rowheader', { name: 'data.orderNumber' }));
    await visible(card.getByText('"orderNumber": "ORD-1042"'));
    await visible(page.getByRole('rowheader', { name: 'data.stops[].orderId' }));
    // Each field's row comes from the type's JSON Schema: name, type, required or not, description.
    const row = (name: string, of = card) => of.locator('tr', { has: page.getByRole('rowheader', { name, exact: true }) });
    await expect(row('data.total').locator('td').allTextContents()).resolves.toEqual([
      'integer',
      'Required',
      expect.stringContaining('Order total in minor currency units') as string,
    ]);
    await expect(card.getByRole('columnheader').allTextContents()).resolves.toEqual(['Field', 'Type', 'Required', 'Description']);
    const cancelled = page.locator('article', { has: page.getByRole('heading', { name: 'order.cancelled' }) });
    await expect(row('data.reason', cancelled).locator('td').nth(1).textContent()).resolves.toBe('Optional');
    const failed = page.locator('article', { has: page.getByRole('heading', { name: 'webhook.delivery_failed' }) });
    await expect(row('data.lastStatusCode', failed).locator('td').first().textContent()).resolves.toBe('integer or null');
    const customer = page.locator('article', { has: page.getByRole('heading', { name: 'customer.created' }) });
    await expect(row('data.email', customer).locator('td').first().textContent()).resolves.toBe('string (email)');
    await shot(page, 'catalogue-laptop');
  }, 60_000);

  it('reads well on a phone and in dark mode', async () => {
    receiver.respondStatus(500, 'upstream unavailable');
    const phone = { viewport: PHONE, isMobile: true, hasTouch: true };
    const page = await open('/dashboard', phone);
    await visible(heading(page, 'Sign in'));
    await shot(page, 'sign-in-phone');
    await signIn(page, ADMIN_KEY);
    await visible(heading(page, 'Endpoints'));

    await page.getByRole('button', { name: 'New endpoint' }).click();
    const form = page.getByRole('dialog', { name: 'New endpoint' });
    await form.getByLabel('Name', { exact: true }).fill('Phone endpoint');
    await form.getByLabel('URL').fill(`${receiver.url}/phone`);
    await form.getByRole('checkbox', { name: /order\.created/ }).check();
    await form.getByRole('button', { name: 'Create endpoint' }).click();
    await expect(shownSecret(page.getByRole('dialog', { name: 'Endpoint created' }))).resolves.toMatch(/^whsec_/);
    await shot(page, 'create-with-secret-phone');
    await page.getByRole('button', { name: 'I have saved it' }).click();

    await visible(heading(page, 'Phone endpoint'));
    await publishOrder();
    const row = page.locator('tbody tr[data-status="failed"]');
    await visible(row);
    // Stacked rows have no column heading: the count says what it counts, in the right form.
    await expect(shownText(row.locator('td[data-label="Attempts"]'))).resolves.toBe('3 attempts');
    receiver.respondStatus(200);
    await publishOrder();
    const delivered = page.locator('tbody tr[data-status="succeeded"]');
    await visible(delivered);
    await expect(shownText(delivered.locator('td[data-label="Attempts"]'))).resolves.toBe('1 attempt');
    await shot(page, 'deliveries-phone', true);
    await row.getByRole('link').click();
    await visible(heading(page, 'Attempts (3)'));
    await shot(page, 'delivery-detail-phone', true);

    await page.getByRole('link', { name: 'Endpoints', exact: true }).first().click();
    await visible(page.locator('td .rate'));
    await shot(page, 'endpoints-phone');
    await page.getByRole('link', { name: 'Event catalogue' }).click();
    await visible(page.locator('.type-card'));
    await shot(page, 'catalogue-phone');

    const dark = await open('/dashboard', { colorScheme: 'dark' });
    await signIn(dark, ADMIN_KEY);
    await visible(dark.getByRole('link', { name: 'Phone endpoint' }));
    await visible(dark.locator('td .rate'));
    await shot(dark, 'endpoints-dark-laptop');
    await dark.getByRole('link', { name: 'Phone endpoint' }).click();
    await dark.locator('tbody tr[data-status="failed"] a').click();
    await visible(heading(dark, 'Attempts (3)'));
    await shot(dark, 'delivery-detail-dark-laptop', true);
  }, 60_000);

  /** `date` as a datetime-local input takes it: local time, to the second. */
  function localInput(date: Date): string {
    const pad = (n: number) => String(n).padStart(2, '0');
    return (
      `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
      `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
    );
  }

  describe('on a deployment that queues at most 3 deliveries per replay or retry-failed request', () => {
    /** The advisory lock a replay or retry-failed of an endpoint holds while it runs. */
    const REPLAY_LOCK = 0x48_4c_52_50;
    type Queued = { queued: number; next?: string };
    let capped: TestApp;

    beforeAll(async () => {
      capped = await startApp({ env: { RETRY_SCHEDULE_MS: '0,200,400', MAX_REPLAY_DELIVERIES: '3', REPLAY_TIMEOUT_MS: '1500' } });
    }, 60_000);

    afterAll(async () => {
      await capped?.close();
    });

    /** The JSON bodies a page sends to paths ending in `suffix`. */
    function recordSent(page: Page, suffix: string): unknown[] {
      const sent: unknown[] = [];
      page.on('request', (request) => {
        if (request.url().endsWith(suffix)) sent.push(request.postDataJSON());
      });
      return sent;
    }

    /** Clicks `button` and answers the status and body of the request to `suffix` it sends. */
    async function answerTo(page: Page, suffix: string, button: Locator): Promise<{ status: number; body: Queued }> {
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith(suffix) && r.request().method() === 'POST', { timeout: UI_DEADLINE }),
        button.click(),
      ]);
      return { status: response.status(), body: (await response.json()) as Queued };
    }

    /** Clicks Continue until the answers hold no `next`, collecting them after `first`. */
    async function continueToEnd(page: Page, suffix: string, first: Queued): Promise<Queued[]> {
      const answers = [first];
      const go = page.getByRole('button', { name: 'Continue', exact: true });
      while (answers.at(-1)!.next) {
        expect(answers.length).toBeLessThan(8);
        const { status, body } = await answerTo(page, suffix, go);
        expect(status).toBe(202);
        answers.push(body);
      }
      return answers;
    }

    it('replays a 7-event window 3 at a time: says more remain, continues (through a 409 and a 503) until each event reached the receiver once', async () => {
      receiver.respondStatus(200);
      const { id, secret } = await createEndpoint('capped-replay', ['order.created'], capped);
      const paused = (await (await capped.api(`/webhooks/${id}`, { method: 'PUT', json: { isActive: false } })).json()) as {
        disabledAt: string;
      };
      for (let i = 0; i < 7; i++) await publishOrder(capped);
      // The window ends at the next whole second; an event published after it is not replayed, however many requests it takes.
      const until = new Date(Math.ceil((Date.now() + 1) / 1000) * 1000);
      await eventually(
        async () => Date.now(),
        (now) => now > until.getTime() + 10,
        { what: 'the end of the window' },
      );
      await publishOrder(capped);

      const page = await open(`/dashboard#/endpoints/${id}`, {}, capped);
      const sent = recordSent(page, '/replay');
      await signIn(page, ADMIN_KEY);
      await visible(heading(page, 'capped-replay'));
      await page.getByRole('button', { name: 'Activate', exact: true }).click();
      await page.locator('.endpoint-head').getByRole('button', { name: 'Replay them…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Replay missed events' });
      await dialog.getByLabel('Until (optional)').fill(localInput(until));
      const since = new Date(await dialog.getByLabel('Events published since').inputValue()).toISOString();
      expect(Date.parse(since)).toBe(Math.floor(Date.parse(paused.disabledAt) / 1000) * 1000);
      const first = await answerTo(page, '/replay', dialog.getByRole('button', { name: 'Replay events' }));
      expect(first).toEqual({ status: 202, body: { queued: expect.any(Number) as number, next: expect.any(String) as string } });
      expect(first.body.queued).toBeLessThanOrEqual(3);

      const progress = page.locator('.endpoint-head .queued-progress');
      const soFar = `Replay queued ${first.body.queued} ${first.body.queued === 1 ? 'delivery' : 'deliveries'} so far; more remain.`;
      await visible(progress.getByText(soFar, { exact: true }));
      await expect(progress.locator('time').getAttribute('datetime')).resolves.toBe(first.body.next);
      await shot(page, 'replay-more-remain-laptop');

      // Another replay of this endpoint running: 409, said plainly, nothing queued, Continue still offered.
      const locker = new Client({ connectionString: capped.db.url });
      await locker.connect();
      try {
        await locker.query('SELECT pg_advisory_lock($1, hashtext($2))', [REPLAY_LOCK, id]);
        const go = page.getByRole('button', { name: 'Continue', exact: true });
        await expect(answerTo(page, '/replay', go)).resolves.toMatchObject({ status: 409 });
        await visible(progress.getByRole('alert').getByText('already running; try again when it finishes'));
        await shot(page, 'replay-already-running-laptop');
        await locker.query('SELECT pg_advisory_unlock($1, hashtext($2))', [REPLAY_LOCK, id]);

        // Past REPLAY_TIMEOUT_MS (the deliveries table held): 503, and nothing was queued.
        await locker.query('BEGIN');
        await locker.query('LOCK TABLE deliveries IN SHARE MODE');
        await expect(answerTo(page, '/replay', go)).resolves.toMatchObject({ status: 503 });
        await visible(progress.getByRole('alert').getByText('took too long and was stopped: nothing was queued'));
        await locker.query('ROLLBACK');
      } finally {
        await locker.end();
      }
      await visible(progress.getByText(soFar, { exact: true }));
      expect(await capped.db.query('SELECT id FROM deliveries WHERE webhook_id = $1', [id])).toHaveLength(first.body.queued);

      const answers = await continueToEnd(page, '/replay', first.body);
      await visible(page.locator('.endpoint-head').getByText('Replay queued 7 deliveries.', { exact: true }));
      expect(await progress.count()).toBe(0);
      expect(answers.reduce((sum, answer) => sum + answer.queued, 0)).toBe(7);
      expect(answers.length).toBeGreaterThanOrEqual(3);
      // Each request after the first (the refused two included): the same window from where the one before stopped.
      const from = (answer: Queued) => ({ since: answer.next, until: until.toISOString() });
      expect(sent).toEqual([{ since, until: until.toISOString() }, from(first.body), from(first.body), ...answers.slice(0, -1).map(from)]);

      const arrived = await receiver.waitFor(7, (request) => request.path === '/capped-replay');
      for (const request of arrived) expect(verifyWebhook(secret, request.headers, request.body).type).toBe('order.created');
      expect(new Set(arrived.map((request) => request.headers['x-webhook-id'])).size).toBe(7);
      await eventually(
        () => page.locator('tbody tr[data-status="succeeded"]').count(),
        (count) => count === 7,
        { what: 'seven succeeded deliveries in the log' },
      );
      const log = (await (await capped.api(`/webhooks/${id}/deliveries?limit=100`)).json()) as { data: Array<{ eventId: string }> };
      expect(log.data).toHaveLength(7);
      expect(receiver.to('/capped-replay')).toHaveLength(7);
    }, 60_000);

    it('retries 5 failed deliveries 3 at a time: says more remain, and Continue restarts the rest', async () => {
      let failing = true;
      receiver.respondWith((_request, res) => {
        res.writeHead(failing ? 500 : 200);
        res.end();
      });
      const { id } = await createEndpoint('capped-retry', ['order.created'], capped);
      for (let i = 0; i < 5; i++) await publishOrder(capped);
      await eventually(
        async () => ((await (await capped.api(`/webhooks/${id}/deliveries?status=failed`)).json()) as { data: unknown[] }).data.length,
        (count) => count === 5,
        { what: 'five failed deliveries' },
      );
      failing = false;

      const page = await open(`/dashboard#/endpoints/${id}`, {}, capped);
      const sent = recordSent(page, '/retry-failed');
      await signIn(page, ADMIN_KEY);
      await visible(page.locator('tbody tr[data-status="failed"]'));
      await page.getByRole('button', { name: 'Retry all failed…' }).click();
      const dialog = page.getByRole('dialog', { name: 'Retry failed deliveries' });
      const first = await answerTo(page, '/retry-failed', dialog.getByRole('button', { name: 'Retry failed deliveries' }));
      expect(first).toEqual({ status: 202, body: { queued: expect.any(Number) as number, next: expect.any(String) as string } });
      const progress = page.locator('.deliveries-section .queued-progress');
      await visible(progress.getByText(/^\d failed deliver(y|ies) queued for a new attempt so far; more remain\.$/));
      await shot(page, 'retry-failed-more-remain-laptop');
      const answers = await continueToEnd(page, '/retry-failed', first.body);
      expect(answers.reduce((sum, answer) => sum + answer.queued, 0)).toBe(5);
      await visible(page.locator('.deliveries-section').getByText('5 failed deliveries queued for a new attempt.', { exact: true }));
      expect(sent).toEqual([{}, ...answers.slice(0, -1).map((answer) => ({ since: answer.next }))]);
      await eventually(
        () => page.locator('tbody tr[data-status="succeeded"]').count(),
        (count) => count === 5,
        { what: 'five succeeded deliveries in the log' },
      );
      // Three failed attempts each, then one that succeeded: every one retried once.
      expect(receiver.to('/capped-retry')).toHaveLength(20);
    }, 60_000);
  });

  describe('on a deployment whose deliveries expire 3 s after their event', () => {
    let expiring: TestApp;

    beforeAll(async () => {
      expiring = await startApp({ env: { RETRY_SCHEDULE_MS: '0,200,400', MAX_DELIVERY_AGE: '3s' } });
    }, 60_000);

    afterAll(async () => {
      await expiring?.close();
    });

    it('shows an expired delivery as Expired, still failed and retryable; refuses a schedule longer than MAX_DELIVERY_AGE on its field', async () => {
      receiver.respondStatus(200);
      // One attempt a second: of 8 events published at once, those not sent within 3 s expire.
      const created = await expiring.api('/webhooks', {
        method: 'POST',
        json: { name: 'slow-lane', url: `${receiver.url}/slow-lane`, events: ['order.created'], rateLimitPerSecond: 1 },
      });
      expect(created.status).toBe(201);
      const { id } = (await created.json()) as { id: string };
      for (let i = 0; i < 8; i++) await publishOrder(expiring);

      const page = await open(`/dashboard#/endpoints/${id}`, {}, expiring);
      await signIn(page, ADMIN_KEY);
      await visible(heading(page, 'slow-lane'));
      const expired = page.locator('tbody tr[data-status="failed"]', { has: page.locator('.badge-expired') });
      await visible(expired, 20_000);
      await expect(expired.first().locator('td[data-label="Status"]').innerText()).resolves.toBe('Expired');
      await visible(expired.first().getByText(/^expired: still pending 3s after its event/));
      // Filtered by status, an expired delivery is a failed one.
      await page.getByLabel('Status').selectOption('failed');
      await visible(expired);
      await shot(page, 'deliveries-expired-laptop');

      await expired.first().getByRole('link').click();
      await visible(page.locator('.endpoint-head .badge-expired').getByText('Expired'));
      await expect(page.locator('.endpoint-head .badge-expired').getAttribute('title')).resolves.toBe(
        'It waited longer than a delivery may wait here without succeeding, so it ended failed. Retry sends it again.',
      );
      await expect(page.locator('.endpoint-head [data-status]').getAttribute('data-status')).resolves.toBe('failed');
      const deliveryId = new URL(page.url()).hash.split('/').pop()!;
      await page.getByRole('button', { name: 'Retry delivery' }).click();
      await visible(page.locator('.endpoint-head [data-status="succeeded"]'));
      expect(await page.locator('.badge-expired').count()).toBe(0);
      await expect((await expiring.api(`/deliveries/${deliveryId}`)).json()).resolves.toMatchObject({ status: 'succeeded' });

      // A schedule longer than a delivery may wait: the API's 400 shows under the field.
      await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'slow-lane' }).click();
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      const form = page.getByRole('dialog', { name: 'Edit endpoint' });
      await form.getByLabel('Retry schedule').fill('0, 1 min');
      await form.getByRole('button', { name: 'Save changes' }).click();
      const fieldError = form.locator('#ep-schedule-error');
      // In the form's words, not the API's field and setting names.
      await visible(fieldError.getByText('longer than a delivery may wait here (3s). Shorten them or remove one.', { exact: false }));
      await expect(fieldError.innerText()).resolves.not.toMatch(/retrySchedule|MAX_DELIVERY_AGE/);
      await expect(form.getByLabel('Retry schedule').getAttribute('aria-invalid')).resolves.toBe('true');
      await expect(
        form
          .getByLabel('Retry schedule')
          .evaluate((input) => input === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement),
      ).resolves.toBe(true);
      await shot(page, 'schedule-too-long-laptop');
      await form.getByLabel('Retry schedule').fill('0, 1s');
      await expect(fieldError.innerText()).resolves.toBe('');
      await form.getByRole('button', { name: 'Save changes' }).click();
      await form.waitFor({ state: 'detached', timeout: UI_DEADLINE });
      await expect((await expiring.api(`/webhooks/${id}`)).json()).resolves.toMatchObject({ retrySchedule: [0, 1_000] });
    }, 60_000);
  });
});
