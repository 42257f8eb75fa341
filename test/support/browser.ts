import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/**
 * The browser of the browser specs: the system's Chromium where there is one, otherwise the build
 * that the npm package `@sparticuz/chromium` ships, so that `npm test` needs nothing but Node.js.
 */
const SYSTEM_CHROMIUM = '/usr/bin/chromium';
const PACKAGED_ENV = 'HOOKLINE_TEST_CHROMIUM';

// This machine's network is closed: without these, Chromium's own background requests are
// refused many at a time and slow its start.
const QUIET_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

// The packaged build's recommended flags include some that would switch off what the specs check
// (the Content-Security-Policy, framing and mixed content rules); those are left out.
const WEAKENING_ARGS = new Set([
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
  // made for a serverless sandbox: with it, closing one browser context closes the browser
  '--single-process',
]);

// The package's type declarations are ESM-only, while the specs run as CommonJS under ts-jest:
// its CommonJS build is required, with the two members used typed here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const PackagedChromium = require('@sparticuz/chromium') as { executablePath(): Promise<string>; args: string[] };

/**
 * Unpacks the packaged Chromium once for the whole run (in Jest's global setup, before the
 * workers start, so that two workers never unpack it over each other).
 */
export async function prepareChromium(): Promise<void> {
  if (existsSync(SYSTEM_CHROMIUM) || process.env[PACKAGED_ENV]) return;
  process.env[PACKAGED_ENV] = await PackagedChromium.executablePath();
}

export async function launchChromium(): Promise<Browser> {
  if (existsSync(SYSTEM_CHROMIUM)) return chromium.launch({ executablePath: SYSTEM_CHROMIUM, args: QUIET_ARGS });
  const executablePath = process.env[PACKAGED_ENV] ?? (await PackagedChromium.executablePath());
  const args = [...PackagedChromium.args.filter((arg) => !WEAKENING_ARGS.has(arg)), ...QUIET_ARGS];
  return chromium.launch({ executablePath, args });
}
