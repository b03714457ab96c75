// Drives the Margins page in headless Chromium (Debian's, through
// playwright-core). Run by dashboard/margins_browser_test.go against a
// dashboard whose engine settled, in test mode, item (40.29 %) three days
// ago and today and lossy (-20 %, today -50 %) three days ago, yesterday and
// today, with:
//   BASE (https://host:port), LINK (a sign-in link), DAYS (three days ago,
//   yesterday and today, YYYY-MM-DD, comma-separated), OUT (screenshot
//   directory), CHROMIUM (executable).
// Any console error, CSP violation, script error or asset that fails to
// load fails it.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { join } from 'node:path';

const { BASE, LINK, DAYS, OUT, CHROMIUM } = process.env;
const [ago3, yesterday, today] = DAYS.split(',');
const D = BASE + '/dashboard/';
const step = (name) => console.log('step:', name);

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
// CSP violations are reported to the page as events too: log them as
// errors (an init script runs outside the page's CSP).
await context.addInitScript(() => {
  document.addEventListener('securitypolicyviolation', (e) => {
    console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
  });
});
const page = await context.newPage();
const problems = [];
// expected is a console error a step causes on purpose (the 400 of a
// refused form), cleared after it.
let expected = null;
page.on('console', (m) => {
  if (m.type() !== 'error') return;
  if (expected && expected.test(m.text())) return;
  problems.push(`console error: ${m.text()} (${m.location().url})`);
});
page.on('pageerror', (e) => problems.push('page error: ' + String(e)));
page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
page.on('response', (r) => {
  const t = r.request().resourceType();
  if (t !== 'document' && r.status() >= 400) problems.push(r.status() + ' ' + r.url());
});
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png'), fullPage: true });
const text = async (sel) => (await page.locator(sel).innerText()).replace(/\s+/g, ' ').trim();
const series = () => page.$$eval('svg.margins g.series', (gs) => gs.map((g) => ({
  product: g.dataset.product,
  points: g.querySelector('polyline').getAttribute('points').trim().split(/\s+/).filter(Boolean).length,
  dots: [...g.querySelectorAll('circle.dot')].map((c) => {
    const b = c.getBoundingClientRect();
    return { day: c.dataset.day, bp: Number(c.dataset.bp), y: b.y + b.height / 2 };
  }),
  stroke: getComputedStyle(g.querySelector('polyline')).stroke,
})));

try {
  step('sign in');
  await page.goto(LINK);
  await page.click('#signin');
  await page.waitForURL(D);

  step('the Margins page: the last 30 days by default');
  await page.click('nav a[href$="/margins"]');
  await page.waitForURL(D + 'margins');
  assert.equal(await text('h1'), 'Margins');
  assert.equal(await page.getAttribute('nav a[href$="/margins"]', 'aria-current'), 'page');
  assert.equal(await page.inputValue('#margins-to'), today);
  const box = await page.locator('svg.margins').boundingBox();
  assert.ok(box && box.width > 600 && box.height > 250, 'the chart is drawn large enough to read: ' + JSON.stringify(box));
  let s = await series();
  assert.deepEqual(s.map((x) => [x.product, x.points, x.dots.length]), [['item', 2, 2], ['lossy', 3, 3]]);
  // The page's stylesheet coloured the lines (an inline style would have
  // been refused): no two alike, none black.
  assert.notEqual(s[0].stroke, s[1].stroke);
  for (const x of s) assert.doesNotMatch(x.stroke, /^(none|rgb\(0, 0, 0\))$/, x.product);
  // Negative margins are drawn below the 0 % line, positive ones above.
  const zb = await page.locator('svg.margins line.zero').boundingBox();
  const zero = zb.y + zb.height / 2;
  for (const x of s) {
    for (const d of x.dots) assert.equal(d.y > zero, d.bp < 0, `${x.product} ${d.day}: ${d.bp} bp at y ${d.y}, 0 % at ${zero}`);
  }
  assert.deepEqual(s[1].dots.map((d) => [d.day, d.bp]), [[ago3, -2000], [yesterday, -2000], [today, -5000]]);
  assert.match(await text('#margins-legend'), /item 40\.29% over the range; target 25\.00% \(dashed\) lossy -28\.57% over the range; target 20\.00% \(dashed\)/);
  assert.equal(await text('tr[data-product="item"]'), 'item 3 USD 4.02 USD 0.00 USD 2.40 40.29% 25.00%');
  assert.equal(await text('tr[data-product="lossy"]'), 'lossy 3 USD 3.75 USD 0.25 USD 4.50 -28.57% 20.00%');
  assert.equal(await text('#margins-total'), 'Total 6 USD 7.77 USD 0.25 USD 6.90 8.24%');
  assert.match(await text('#margins-idle'), /idle/);
  await shot('margins');
  await page.locator('#margins-chart').screenshot({ path: join(OUT, 'margins-chart.png') });

  step('yesterday and today, through the form');
  await page.fill('#margins-from', yesterday);
  await page.fill('#margins-to', today);
  await page.click('#margins-range button');
  await page.waitForURL((u) => u.searchParams.get('from') === yesterday);
  s = await series();
  assert.deepEqual(s.map((x) => [x.product, x.points]), [['item', 1], ['lossy', 2]]);
  await shot('margins-two-days');

  step('a start after the end: refused with a clear error');
  await page.fill('#margins-from', today);
  await page.fill('#margins-to', yesterday);
  expected = /status of 400/;
  const [resp] = await Promise.all([page.waitForNavigation(), page.click('#margins-range button')]);
  assert.equal(resp.status(), 400);
  assert.equal(await text('.error'), 'The start date must not be after the end date.');
  assert.equal(await page.locator('svg.margins').count(), 0);
  await shot('margins-refused');
  expected = null;

  step('a range with nothing Settled: the empty state');
  await page.fill('#margins-from', '2020-01-01');
  await page.fill('#margins-to', '2020-01-31');
  await page.click('#margins-range button');
  await page.waitForURL((u) => u.searchParams.get('from') === '2020-01-01');
  assert.match(await text('#margins-empty'), /No Settled workflows were created in test mode from 2020-01-01 to 2020-01-31/);
  assert.equal(await page.locator('svg.margins').count(), 0);
  await shot('margins-empty');

  assert.deepEqual(problems, [], 'console errors, CSP violations, script errors or assets that failed to load');
  console.log('ok');
} finally {
  await browser.close();
}
