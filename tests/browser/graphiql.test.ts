/**
 * GraphiQL as a person uses it, in headless Chromium: the key set once, a query in two browser
 * tabs, a live subscription, a screenshot, and no request to anywhere but the server.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { GRAPHIQL_KEY_STORAGE } from '../../src/graphql/graphiql';
import type { RunExecutor } from '../../src/jobs/executor';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm/fake-llm-server';
import { ok } from '../support/graphql-fixtures';
import { answerFromReport, setUpRuns, startExecutor, type RunSetup } from '../support/run-fixtures';
import { startTestApp, type TestApp } from '../support/test-app';
import { launchChromium, leftTheMachine, notChromiumServices, type Browser } from './support/chromium';

/** Where screenshots go: BROWSER_TEST_OUTPUT, or tests/.tmp/browser in the checkout. */
const OUTPUT = process.env.BROWSER_TEST_OUTPUT ?? path.resolve(__dirname, '../.tmp/browser');
/** How long the page may take for one step (the browser shares two cores with the server). */
const STEP_MS = 30_000;

const WHO = 'query Who { viewer { serverAdmin } }';
const PROGRESS = 'subscription Progress($runId: ID!) { runProgress(runId: $runId) { status progress { total succeeded failed pending } } }';
const START_RUN = 'mutation($i: StartRunInput!) { startRun(input: $i) { run { id status } } }';

/** GraphiQL opened on a query (the address a shared link or a reload gives). */
function graphiqlUrl(origin: string, query: string, variables?: Record<string, unknown>): string {
  const url = new URL('/graphql', origin);
  url.searchParams.set('query', query);
  if (variables) url.searchParams.set('variables', JSON.stringify(variables));
  return url.href;
}

/** The text of GraphiQL's result pane, spaces normalised (the editor renders non-breaking spaces). */
async function resultText(page: Page): Promise<string> {
  const text = await page.locator('.graphiql-response').innerText();
  return text.replace(/\u00a0/g, ' ').replace(/\s+/g, ' ').trim();
}

/** Waits until the result pane matches; fails with what it shows instead. */
async function waitForResult(page: Page, pattern: RegExp): Promise<string> {
  try {
    await page.waitForFunction(
      ({ source, flags }) => {
        const pane = document.querySelector('.graphiql-response') as HTMLElement | null;
        return !!pane && new RegExp(source, flags).test(pane.innerText.replace(/\u00a0/g, ' ').replace(/\s+/g, ' '));
      },
      { source: pattern.source, flags: pattern.flags },
      { timeout: STEP_MS, polling: 100 },
    );
  } catch (error) {
    throw new Error(`GraphiQL's result pane never matched ${pattern}; it shows: ${await resultText(page).catch(() => '(no result pane)')}`, { cause: error });
  }
  return resultText(page);
}

async function execute(page: Page): Promise<void> {
  await page.getByRole('button', { name: /^Execute query/ }).click({ timeout: STEP_MS });
}

function pngSize(file: Buffer): { width: number; height: number } {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(file.subarray(0, 8).equals(signature)).toBe(true);
  expect(file.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: file.readUInt32BE(16), height: file.readUInt32BE(20) };
}

describe('GraphiQL in headless Chromium', () => {
  let t: TestApp;
  let fake: FakeLlm;
  let setup: RunSetup;
  let browser: Browser;
  let executor: RunExecutor | undefined;
  let origin: string;
  let first: Page;
  let second: Page;
  const dialogs: { tab: number; type: string }[] = [];

  beforeAll(async () => {
    t = await startTestApp();
    origin = `http://127.0.0.1:${t.port}`;
    fake = await startFakeLlm({ models: [{ id: 'fake-model', maxModelLen: 32768 }] });
    fake.setHandler(answerFromReport());
    setup = await setUpRuns(t, fake.baseUrl, { reports: 5, maxConcurrency: 2 });
    browser = await launchChromium();
    rmSync(OUTPUT, { recursive: true, force: true });
    mkdirSync(OUTPUT, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await executor?.stop();
    await fake?.close();
    await t?.close();
  });

  it('asks for the key once: the key button stores it for the origin and the query runs', async () => {
    first = browser.context.pages()[0] ?? (await browser.newTab());
    first.on('dialog', (dialog) => {
      dialogs.push({ tab: 1, type: dialog.type() });
      void dialog.accept(t.adminKey);
    });
    await first.goto(graphiqlUrl(origin, WHO), { timeout: STEP_MS });
    const keyButton = first.locator('#reportql-key');
    await keyButton.waitFor({ timeout: STEP_MS });
    expect(await keyButton.textContent()).toBe('Set API key');
    // Before a key is known the page sends nothing and says what to do.
    await execute(first);
    expect(await waitForResult(first, /UNAUTHENTICATED/)).toContain('Set API key');

    await keyButton.click();
    await first.waitForFunction(() => document.getElementById('reportql-key')?.textContent?.startsWith('API key \u2713'), undefined, { timeout: STEP_MS });
    // The answer given while no key was known goes away with the key, before anything runs again.
    await first.waitForFunction(() => !/UNAUTHENTICATED|Set API key/.test((document.querySelector('.graphiql-response') as HTMLElement | null)?.innerText ?? ''), undefined, { timeout: STEP_MS });
    expect(dialogs).toEqual([{ tab: 1, type: 'prompt' }]);
    expect(await first.evaluate((name) => window.localStorage.getItem(name), GRAPHIQL_KEY_STORAGE)).toBe(`Bearer ${t.adminKey}`);

    await execute(first);
    expect(await waitForResult(first, /"serverAdmin": true/)).toContain('"data"');
  });

  it('opens an example from the menu in a new GraphiQL tab of the same page: no second page load, the link in the address bar', async () => {
    // A navigation (a page load) is the only request that asks to upgrade insecure requests.
    const pageLoads = () => browser.requests.filter((r) => r.tab === 1 && r.via === 'cdp' && r.url.startsWith(`${origin}/graphql`) && r.headers['Upgrade-Insecure-Requests'] === '1').length;
    const editor = (kind: string) =>
      first.evaluate((file) => {
        const models = (window as unknown as { monaco: { editor: { getModels(): { uri: { path: string }; getValue(): string }[] } } }).monaco.editor.getModels();
        return models.find((m) => m.uri.path.endsWith(file))?.getValue() ?? null;
      }, kind);
    const loadsBefore = pageLoads();
    expect(loadsBefore).toBeGreaterThanOrEqual(1);
    const tabsBefore = await first.locator('.graphiql-tab').count();
    await first.evaluate(() => ((window as unknown as { pageMarker: string }).pageMarker = 'still the first load'));

    await first.locator('#reportql-examples').selectOption('first-look');
    await first.waitForFunction(() => new URL(window.location.href).searchParams.get('query')?.includes('query FirstLook'), undefined, { timeout: STEP_MS });
    await first.waitForFunction(() => (window as unknown as { monaco: { editor: { getModels(): { uri: { path: string }; getValue(): string }[] } } }).monaco.editor.getModels().some((m) => m.uri.path.endsWith('operation.graphql') && m.getValue().includes('query FirstLook')), undefined, { timeout: STEP_MS });
    expect(await first.locator('.graphiql-tab').count()).toBe(Math.max(tabsBefore, 1) + 1);
    expect(await first.locator('#reportql-examples').inputValue()).toBe('');
    // GraphiQL names the tab after the operation once it has read the new text.
    await first.locator('.graphiql-tab-active', { hasText: 'FirstLook' }).waitFor({ timeout: STEP_MS });
    await execute(first);
    expect(await waitForResult(first, /"serverAdmin": true/)).toContain('"totalCount"');

    await first.locator('#reportql-examples').selectOption('register-endpoint');
    await first.waitForFunction(() => new URL(window.location.href).searchParams.get('query')?.includes('registerEndpoint'), undefined, { timeout: STEP_MS });
    await first.waitForFunction(() => (window as unknown as { monaco: { editor: { getModels(): { uri: { path: string }; getValue(): string }[] } } }).monaco.editor.getModels().some((m) => m.uri.path.endsWith('variables.json') && m.getValue().includes('projectId')), undefined, { timeout: STEP_MS });
    expect(await editor('variables.json')).toContain(setup.projectId);

    // Back: the previous example's address and query, still on the same page.
    await first.goBack({ timeout: STEP_MS });
    await first.waitForFunction(() => (window as unknown as { monaco: { editor: { getModels(): { uri: { path: string }; getValue(): string }[] } } }).monaco.editor.getModels().some((m) => m.uri.path.endsWith('operation.graphql') && m.getValue().includes('query FirstLook')), undefined, { timeout: STEP_MS });
    expect(await first.evaluate(() => (window as unknown as { pageMarker?: string }).pageMarker)).toBe('still the first load');
    expect(pageLoads()).toBe(loadsBefore);
  });

  it('runs the query in a second tab with the same key, without asking again', async () => {
    second = await browser.newTab();
    second.on('dialog', (dialog) => {
      dialogs.push({ tab: 2, type: dialog.type() });
      void dialog.dismiss();
    });
    await second.goto(graphiqlUrl(origin, WHO), { timeout: STEP_MS });
    await second.locator('#reportql-key').waitFor({ timeout: STEP_MS });
    expect(await second.locator('#reportql-key').textContent()).toMatch(/^API key \u2713/);
    await execute(second);
    expect(await waitForResult(second, /"serverAdmin": true/)).toContain('"data"');

    expect(dialogs.filter((d) => d.tab === 2)).toEqual([]);
    const posts = browser.requests.filter((r) => r.tab === 2 && r.via === 'cdp' && r.url === `${origin}/graphql` && r.headers['content-type']?.includes('json'));
    expect(posts.length).toBeGreaterThanOrEqual(1);
    for (const post of posts) expect(post.headers['authorization'] ?? post.headers['Authorization']).toBe(`Bearer ${t.adminKey}`);
  });

  it('runs a subscription: the run\'s current state first, then its progress to the end', async () => {
    const run = ok(await t.gql(START_RUN, { i: { modelId: setup.modelId, datasetId: setup.datasetId } })).startRun.run as { id: string; status: string };
    expect(run.status).toBe('QUEUED');

    await second.goto(graphiqlUrl(origin, PROGRESS, { runId: run.id }), { timeout: STEP_MS });
    await second.locator('#reportql-key').waitFor({ timeout: STEP_MS });
    await execute(second);
    // No worker yet: the first event is the queued run.
    expect(await waitForResult(second, /"status": "QUEUED"/)).toContain('"total": 5');

    executor = await startExecutor(t);
    const final = await waitForResult(second, /"status": "SUCCEEDED"/);
    expect(final).toContain('"succeeded": 5');
    expect(final).toContain('"pending": 0');

    // Over graphql-ws on the server's own address, with the stored key on the subscribe message.
    const subscribe = browser.frames
      .filter((f) => f.tab === 2 && f.sent)
      .map((f) => JSON.parse(f.payload) as { type: string; payload?: { query?: string; extensions?: { headers?: Record<string, string> } } })
      .find((m) => m.type === 'subscribe' && m.payload?.query?.includes('runProgress'));
    expect(subscribe?.payload?.extensions?.headers?.Authorization).toBe(`Bearer ${t.adminKey}`);
    const events = browser.frames
      .filter((f) => f.tab === 2 && !f.sent)
      .map((f) => JSON.parse(f.payload) as { type: string; payload?: { data?: { runProgress?: { status: string } } } })
      .filter((m) => m.type === 'next' && m.payload?.data?.runProgress)
      .map((m) => m.payload!.data!.runProgress!.status);
    expect(events[0]).toBe('QUEUED');
    expect(events[events.length - 1]).toBe('SUCCEEDED');
    expect(browser.requests.some((r) => r.tab === 2 && r.url === `ws://127.0.0.1:${t.port}/graphql`)).toBe(true);
  });

  it('takes a screenshot of the finished subscription', async () => {
    const file = path.join(OUTPUT, 'graphiql-subscription.png');
    await second.screenshot({ path: file, timeout: STEP_MS });
    const png = readFileSync(file);
    const size = pngSize(png);
    expect(size).toEqual({ width: 1280, height: 800 });
    expect(png.length).toBeGreaterThan(10_000);
  });

  it('renders a chart: the run\'s throughput as an SVG image from a signed URL', async () => {
    const chart = `/charts/projects/${setup.projectId}/throughput.svg?useCaseIds=${setup.useCaseId}&strategy=ZERO_SHOT`;
    const signed = ok(await t.gql('query ($p: String!) { chartImageUrl(path: $p) { url } }', { p: chart })).chartImageUrl.url as string;
    const served = await fetch(`${origin}${signed}`);
    expect([served.status, served.headers.get('content-type'), (await served.text()).slice(0, 200)]).toEqual([200, 'image/svg+xml; charset=utf-8', expect.stringContaining('<svg')]);
    await second.goto(graphiqlUrl(origin, WHO), { timeout: STEP_MS });
    const image = await second.evaluate(
      (src) =>
        new Promise<{ width: number; height: number }>((resolve, reject) => {
          const img = document.createElement('img');
          img.onload = () => resolve({ width: img.naturalWidth, height: img.naturalHeight });
          img.onerror = () => reject(new Error('the chart did not load'));
          img.style.cssText = 'position:fixed;top:0;left:0;z-index:10000;background:#fff';
          img.src = src;
          document.body.appendChild(img);
        }),
      signed,
    );
    expect(image.width).toBeGreaterThan(100);
    expect(image.height).toBeGreaterThan(100);
    const file = path.join(OUTPUT, 'throughput-chart.png');
    await second.screenshot({ path: file, timeout: STEP_MS });
    expect(readFileSync(file).length).toBeGreaterThan(10_000);
    expect(browser.requests.some((r) => r.tab === 2 && r.url === `${origin}${signed}`)).toBe(true);
  });

  it('sends no request anywhere but the server: every URL the tabs loaded is the server\'s or the page\'s own', async () => {
    const seen = browser.requests.map((r) => r.url);
    // The recorder saw the page, its API calls and its WebSocket.
    expect(seen).toContain(graphiqlUrl(origin, WHO));
    expect(browser.requests.filter((r) => r.via === 'cdp').length).toBeGreaterThan(3);
    expect(leftTheMachine(browser.requests, origin)).toEqual([]);
    // Nothing the pages did reached the trap either (Chromium's own service calls aside, answered 403 there).
    expect(notChromiumServices(browser.trap.attempts)).toEqual([]);
  });
});

describe('the browser tests\' request recorder', () => {
  let t: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestApp();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('sees a page\'s and a worker\'s request to another host, and the trap receives them', async () => {
    const origin = `http://127.0.0.1:${t.port}`;
    const page = await browser.newTab();
    await page.goto(`${origin}/livez`, { timeout: STEP_MS });
    await page.evaluate(async () => {
      await fetch('http://cdn.example.org/page.js').catch(() => undefined);
      const worker = new Worker(URL.createObjectURL(new Blob(["fetch('http://workers.example.org/worker.js').catch(() => undefined).then(() => postMessage('done'))"], { type: 'text/javascript' })));
      await new Promise((resolve) => worker.addEventListener('message', resolve));
    });
    expect(leftTheMachine(browser.requests, origin)).toEqual(expect.arrayContaining(['http://cdn.example.org/page.js', 'http://workers.example.org/worker.js']));
    expect(notChromiumServices(browser.trap.attempts)).toEqual(expect.arrayContaining(['GET http://cdn.example.org/page.js', 'GET http://workers.example.org/worker.js']));
  });
});
