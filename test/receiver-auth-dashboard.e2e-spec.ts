import type { Browser, Locator, Page } from 'playwright-core';
import { ADMIN_KEY, startApp, type TestApp } from './support/app';
import { launchChromium } from './support/browser';
import { createAuthority } from './support/certificates';
import { expectJson } from './support/expectations';
import { createWebhook, orderData, publish } from './support/fixtures';
import { Receiver } from './support/receiver';

const UI_DEADLINE = 10_000;

/**
 * The dashboard in Chromium says how an endpoint authenticates to its receiver (OAuth2, a client
 * certificate) without a secret in the page, and its edit form sets HTTP Basic and bearer auth.
 */
describe('receiver authentication in the dashboard', () => {
  let app: TestApp;
  let receiver: Receiver;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    receiver = await Receiver.start();
    app = await startApp({ env: { RETRY_SCHEDULE_MS: '0,200,400' } });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await receiver?.close();
  });

  beforeEach(async () => {
    const context = await browser.newContext({ viewport: { width: 1366, height: 860 } });
    page = await context.newPage();
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(`console: ${message.text()}`);
    });
  });

  afterEach(async () => {
    await page.context().close();
    expect(problems.splice(0)).toEqual([]);
  });

  const visible = (locator: Locator) => locator.first().waitFor({ state: 'visible', timeout: UI_DEADLINE });
  const fact = (name: string) =>
    page
      .locator('dl.settings div')
      .filter({ has: page.getByText(name, { exact: true }) })
      .locator('dd');

  async function openEndpoint(id: string, name: string): Promise<void> {
    await page.goto(`${app.baseUrl}/dashboard#/endpoints/${id}`);
    await page.getByLabel('API key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await visible(page.getByRole('heading', { name, exact: true }));
  }

  it('shows OAuth2 and the client certificate by their public parts only', async () => {
    const authority = await createAuthority('Receiver Private CA');
    const client = await authority.issue({ commonName: 'hookline-berlin', use: 'client' });
    const webhook = await createWebhook(app, `${receiver.url}/oauth-shown`, ['order.created'], {
      name: 'oauth-shown',
      auth: {
        type: 'oauth2',
        tokenUrl: 'https://auth.example.com/oauth/token',
        clientId: 'berlin-client',
        clientSecret: 'cs_never_in_page',
      },
      tls: { clientCertificate: client.certificate, clientKey: client.key, ca: authority.certificate },
    });
    await openEndpoint(webhook.id, 'oauth-shown');
    await expect(fact('Authentication').innerText()).resolves.toBe(
      'OAuth2 client credentials (client id berlin-client), token from auth.example.com',
    );
    await expect(fact('Mutual TLS').innerText()).resolves.toMatch(
      /^Client certificate CN=hookline-berlin, expires .+ · trusts only CN=Receiver Private CA$/,
    );
    const html = await page.content();
    expect(html).not.toContain('cs_never_in_page');
    expect(html).not.toContain('PRIVATE KEY');

    // Saving another setting keeps OAuth2 as it is.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('dialog', { name: 'Edit endpoint' });
    await expect(form.getByLabel('How Hookline proves itself to your receiver').inputValue()).resolves.toBe('oauth2');
    await form.getByLabel('Name', { exact: true }).fill('oauth-kept');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(page.getByRole('heading', { name: 'oauth-kept', exact: true }));
    const saved = await expectJson<{ auth: unknown }>(await app.api(`/webhooks/${webhook.id}`), 200);
    expect(saved.auth).toMatchObject({ type: 'oauth2', clientId: 'berlin-client' });
  }, 60_000);

  it('sets HTTP Basic, then a bearer token, from the edit form; the receiver gets them', async () => {
    const webhook = await createWebhook(app, `${receiver.url}/form-auth`, ['order.created'], { name: 'form-auth' });
    await openEndpoint(webhook.id, 'form-auth');
    await expect(fact('Authentication').innerText()).resolves.toBe('None');

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('dialog', { name: 'Edit endpoint' });
    const method = form.getByLabel('How Hookline proves itself to your receiver');
    await method.selectOption('basic');
    await form.getByLabel('User name').fill('hookline');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(form.getByRole('alert').getByText('Authentication: give the password', { exact: false }));
    await form.getByLabel('Password').fill('pa55word');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(fact('Authentication').getByText('HTTP Basic (user hookline)', { exact: true }));
    expect(await page.content()).not.toContain('pa55word');
    await publish(app, 'order.created', orderData(1));
    const [basic] = await receiver.waitFor(1, (r) => r.path === '/form-auth');
    expect(basic.headers.authorization).toBe(`Basic ${Buffer.from('hookline:pa55word').toString('base64')}`);

    // Edited again: the password is never shown, and left empty it is kept.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await expect(form.getByLabel('Password').inputValue()).resolves.toBe('');
    await expect(form.getByLabel('Password').getAttribute('placeholder')).resolves.toMatch(/^Set – leave empty to keep/);
    await method.selectOption('bearer');
    await form.getByLabel('Token').fill('tok_from_form');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(fact('Authentication').getByText('Bearer token', { exact: true }));
    await publish(app, 'order.created', orderData(2));
    const requests = await receiver.waitFor(2, (r) => r.path === '/form-auth');
    expect(requests[1].headers.authorization).toBe('Bearer tok_from_form');

    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await method.selectOption('none');
    await form.getByRole('button', { name: 'Save changes' }).click();
    await visible(fact('Authentication').getByText('None', { exact: true }));
    await expect(expectJson<{ auth: unknown }>(await app.api(`/webhooks/${webhook.id}`), 200)).resolves.toMatchObject({ auth: null });
  }, 60_000);
});
