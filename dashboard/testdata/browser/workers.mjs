// Drives the Workers page and a workflow's attempts in headless Chromium
// (Debian's, through playwright-core), as an operator reads them. Run by
// dashboard/workers_browser_test.go against the reference server with a
// real Go worker (client.Worker) serving ticket-triage, with:
//   BASE (https://host:port), LINK (a sign-in link), KEY_ID (the worker
//   key's id), KEY_NAME (its name), HOST and NAME (what the worker says of
//   itself), RETRIED (a workflow whose first attempt the worker failed and
//   whose second it completed), HELD (a workflow whose task the worker
//   holds now), OUT (screenshot directory), CHROMIUM (executable).
// A dialog, console error, CSP violation or asset that fails to load fails it.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { join } from 'node:path';

const { BASE, LINK, KEY_ID, KEY_NAME, HOST, NAME, RETRIED, HELD, OUT, CHROMIUM } = process.env;
const D = BASE + '/dashboard/';
const step = (name) => console.log('step:', name);

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
await context.addInitScript(() => {
  document.addEventListener('securitypolicyviolation', (e) => {
    console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
  });
});
const page = await context.newPage();
const problems = [];
page.on('dialog', async (d) => { problems.push('dialog: ' + d.message()); await d.dismiss(); });
page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()} (${m.location().url})`); });
page.on('pageerror', (e) => problems.push('page error: ' + String(e)));
page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
page.on('response', (r) => {
  if (r.request().resourceType() !== 'document' && r.status() >= 400) problems.push(r.status() + ' ' + r.url());
});
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png'), fullPage: true });
const text = async (sel) => (await page.locator(sel).innerText()).replace(/\s+/g, ' ').trim();

try {
  step('sign in');
  await page.goto(LINK);
  await page.click('#signin');
  await page.waitForURL(D);

  step('the Workers page: the worker by key, host and name, with its task in flight');
  await page.click('header nav a[href$="/workers"]');
  await page.waitForURL(D + 'workers');
  assert.equal(await page.locator('header nav a[aria-current="page"]').innerText(), 'Workers');
  assert.equal(await text('#workers-summary'), '1 worker seen, holding 1 task now.');
  const row = page.locator(`#workers tr[data-key="${KEY_ID}"][data-host="${HOST}"][data-name="${NAME}"]`);
  assert.equal(await row.count(), 1);
  const cells = await row.locator('td').allInnerTexts();
  assert.match(cells[0], new RegExp(`^${KEY_NAME}\\s+${KEY_ID}$`));
  assert.equal(cells[1], HOST);
  assert.equal(cells[2], NAME);
  assert.match(cells[3], /^settleflow-go\/\d+\.\d+\.\d+$/);
  assert.match(cells[4], /^(just now|\d+ s ago)\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  assert.equal(cells[5].replace(/\s+/g, ' ').trim(), 'ticket-triage 1');
  assert.equal(cells[6], '3', 'tasks claimed: the retried workflow twice, the held one once');
  await shot('workers');

  step('the retried workflow: each attempt and the worker that ran it');
  await page.goto(D + 'workflows/' + RETRIED);
  assert.equal(await text('#status'), 'Settled');
  const attempts = page.locator('#attempts tbody tr');
  assert.equal(await attempts.count(), 2);
  const first = (await attempts.nth(0).locator('td').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
  const second = (await attempts.nth(1).locator('td').allInnerTexts()).map((s) => s.replace(/\s+/g, ' ').trim());
  assert.equal(first[0], '1');
  assert.match(first[1], new RegExp(`^${HOST} · ${NAME} key ${KEY_NAME} ${KEY_ID} · settleflow-go/`));
  assert.equal(first[4], '✗ failed: the model was busy; try again');
  assert.equal(await attempts.nth(0).getAttribute('data-outcome'), 'failed');
  assert.equal(second[0], '2');
  assert.equal(second[4], '✓ completed');
  assert.match(second[3], /^\d+(\.\d+)?(µs|ms|s)$/);
  assert.equal(await page.locator('#attempts .o-failed').evaluate((e) => getComputedStyle(e).color), 'rgb(192, 18, 60)');
  await page.locator('#attempts').scrollIntoViewIfNeeded();
  await shot('workflow-attempts');

  step('the held workflow: its attempt is running now');
  await page.goto(D + 'workflows/' + HELD);
  assert.equal(await text('#status'), 'Running');
  assert.equal(await page.locator('#attempts tbody tr').count(), 1);
  assert.equal(await page.locator('#attempts tbody tr').getAttribute('data-outcome'), 'running');
  assert.equal(await text('#attempts tbody tr td.outcome'), 'running now');
  await shot('workflow-attempt-running');

  step('live mode: no worker seen');
  await page.goto(D + 'workers');
  await page.click('#to-live');
  await page.goto(D + 'workers');
  assert.match(await text('#workers-empty'), /^No worker has claimed a task in live mode yet\. Remote products here: ticket-triage\./);
  await shot('workers-live');
  await page.click('#to-test');

  assert.deepEqual(problems, [], 'dialogs, script errors, CSP refusals or assets that failed to load');
  console.log('ok');
} finally {
  await browser.close();
}
