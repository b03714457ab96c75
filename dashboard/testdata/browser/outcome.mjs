// Drives the workflow pages of outcome pricing in headless Chromium
// (Debian's, through playwright-core), as an operator reads them. Run by
// dashboard/outcome_browser_test.go against the outcome fixture's dashboard
// (outcome_test.go), with:
//   BASE (https://host:port), LINK (a sign-in link), MET and UNMET (hybrid
//   workflows whose outcome met its criteria or not: cost 2.92 in five
//   items, one provider hostile), ZERO (a success-fee workflow charged 0),
//   STOPPED (stopped at its margin floor), PROVIDER (the hostile provider),
//   OUT (screenshot directory), CHROMIUM (executable).
// A dialog (a hostile string run as script), console error, CSP violation
// or asset that fails to load fails it.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { join } from 'node:path';

const { BASE, LINK, MET, UNMET, ZERO, STOPPED, PROVIDER, OUT, CHROMIUM } = process.env;
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
const box = async (sel) => page.locator(sel).first().boundingBox();

try {
  step('sign in');
  await page.goto(LINK);
  await page.click('#signin');
  await page.waitForURL(D);

  step('the workflow list: the charge beside the quote');
  await page.goto(D + 'workflows');
  const row = (id) => text(`#workflows tr:has(a[href$="/workflows/${id}"])`);
  assert.match(await row(MET), /USD 4\.00 USD 4\.00/);
  assert.match(await row(UNMET), /USD 4\.00 USD 1\.20/);
  assert.match(await row(ZERO), /USD 1\.25 USD 0\.00/);
  assert.match(await row(STOPPED), /USD 1\.43 —/);
  await shot('workflows-charged');

  step('a hybrid workflow whose outcome met its criteria');
  await page.click(`#workflows a[href$="/workflows/${MET}"]`);
  await page.waitForURL(D + 'workflows/' + MET);
  assert.equal(await text('#status'), 'Settled');
  assert.match(await text('#pricing'), /^Hybrid a base fee of 30\.00% of the quote \(USD 1\.20\)/);
  assert.equal(await text('#charged'), 'USD 4.00 (outcome met: base fee and success bonus)');
  assert.match(await text('#margin-floor'), /^20\.00% budget USD 3\.20/);

  step('its cost, by category, with a bar each');
  assert.deepEqual(await page.$$eval('#cost-breakdown tbody.cost-group', (gs) => gs.map((g) => g.dataset.category)),
    ['model', 'tools', 'compute', 'human']);
  assert.match(await text('#cost-breakdown tbody[data-category=model]'), /^Model 2 items USD 1\.90 65\.1% openai 12,000 USD 1\.50 anthropic 3,000 USD 0\.40/);
  // The hostile provider is text, not an element.
  assert.equal(await text('#cost-breakdown tbody[data-category=human] td.provider'), PROVIDER);
  assert.equal(await page.locator('#cost-breakdown img').count(), 0);
  assert.equal(await text('#cost-total'), 'Total 5 items USD 2.92 91.3% of the USD 3.20 budget');
  // The bars: drawn by the stylesheet (the accent colour), as long as
  // their share of the track.
  const bar = async (sel) => page.$eval(sel, (svg) => ({
    track: svg.querySelector('.track').getBoundingClientRect().width,
    fill: svg.querySelector('.fill').getBoundingClientRect().width,
    colour: getComputedStyle(svg.querySelector('.fill')).fill,
  }));
  const model = await bar('#cost-breakdown tbody[data-category=model] svg.meter');
  assert.ok(Math.abs(model.fill / model.track - 0.651) < 0.01, JSON.stringify(model));
  assert.equal(model.colour, 'rgb(99, 91, 255)');
  const budget = await bar('#cost-total svg.meter');
  assert.ok(Math.abs(budget.fill / budget.track - 0.913) < 0.01, JSON.stringify(budget));

  step('its outcome: the verdict and the trace, indented as the tree');
  assert.match(await text('#outcome-verdict'), /^✓ Outcome met: the result meets the success criteria, so the base fee and the success bonus are charged\.$/);
  assert.equal(await page.locator('#outcome-trace tbody tr').count(), 8);
  assert.equal(await page.locator('#outcome-trace tbody tr.no').count(), 3);
  const indent = async (depth) => (await box(`#outcome-trace td.depth-${depth} code`)).x;
  const [d0, d1, d2, d3] = [await indent(0), await indent(1), await indent(2), await indent(3)];
  assert.ok(d0 < d1 && d1 < d2 && d2 < d3, `indents ${d0} ${d1} ${d2} ${d3}`);
  assert.equal(await text('#outcome-trace tr[data-node="criteria[0]"] td.matched'), '✓ matched');
  assert.equal(await text('#outcome-trace tr[data-node="criteria[2].criteria[2]"] td.matched'), '✗ not matched');
  assert.equal(await text('#outcome-trace tr[data-node="criteria[2].criteria[2]"] td.path'), '/<script>alert(2)</script>');
  const red = await page.$eval('#outcome-trace tr.no td.matched', (td) => getComputedStyle(td).color);
  assert.equal(red, 'rgb(192, 18, 60)');
  // The criteria's JSON, folded until asked for (no script).
  assert.ok(!(await page.locator('details.criteria pre').isVisible()));
  await page.click('details.criteria summary');
  assert.ok(await page.locator('details.criteria pre').isVisible());
  await page.click('details.criteria summary');
  await shot('workflow-outcome');
  // Its facts, cost and outcome, in page coordinates (a click scrolled).
  const [from, to] = await page.evaluate(() => [
    document.querySelector('h1').getBoundingClientRect().top + scrollY - 12,
    document.querySelector('details.criteria').getBoundingClientRect().bottom + scrollY + 12]);
  await page.screenshot({ path: join(OUT, 'workflow-outcome-detail.png'), fullPage: true,
    clip: { x: 0, y: from, width: 1280, height: to - from } });

  step('the same product, outcome not met: the base fee');
  await page.goto(D + 'workflows/' + UNMET);
  assert.equal(await text('#charged'), 'USD 1.20 (outcome not met: the base fee only)');
  assert.match(await text('#outcome-verdict'), /^✗ Outcome not met: .*so only the base fee is charged\.$/);
  await shot('workflow-outcome-unmet');

  step('success fee, not met: charged 0, nothing on chain, nothing to refund');
  await page.goto(D + 'workflows/' + ZERO);
  assert.equal(await text('#status'), 'Settled');
  assert.equal(await text('#charged'), 'USD 0.00 (outcome not met: nothing charged)');
  assert.match(await text('#no-settlement'), /a charge of 0 never goes on chain/);
  assert.equal(await text('#refund-hint'), 'Nothing was charged, so there is nothing to refund.');
  assert.equal(await page.locator('#refund-form').count(), 0);
  await shot('workflow-charged-zero');

  step('stopped at its margin floor');
  await page.goto(D + 'workflows/' + STOPPED);
  assert.equal(await text('#status'), 'Failed');
  assert.match(await text('#failure'), /^Stopped at its margin floor\. The product reported spending USD 1\.20, more than its budget of USD 1\.07 .* margin_floor_exceeded/);
  assert.equal(await text('#charged'), '— (nothing charged)');
  assert.match(await text('#margin-floor'), /spent USD 0\.13 over the budget$/);
  const over = await bar('#cost-total svg.meter');
  assert.equal(over.colour, 'rgb(192, 18, 60)');
  assert.equal(over.fill, over.track);
  await shot('workflow-margin-floor');

  assert.deepEqual(problems, [], 'dialogs, script errors, CSP refusals or assets that failed to load');
  console.log('ok');
} finally {
  await browser.close();
}
