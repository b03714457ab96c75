// Drives the Customers page and a refund in headless Chromium (Debian's,
// through playwright-core), as an operator would. Run by
// dashboard/refund_browser_test.go against a dashboard whose engine charges
// test customers' balances, with:
//   BASE (https://host:port), LINK (a sign-in link), WF (a Settled workflow
//   of CUSTOMER, charged 1.34), CUSTOMER, CHAIN_ID (the chain deposits go
//   to), OUT (screenshot directory), CHROMIUM (executable).
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { join } from 'node:path';

const { BASE, LINK, WF, CUSTOMER, CHAIN_ID, OUT, CHROMIUM } = process.env;
const D = BASE + '/dashboard/';
const step = (name) => console.log('step:', name);
const until = async (what, fn, ms = 30000) => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 200));
  }
};

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
const page = await context.newPage();
// What must not happen on any page: a script error, something the CSP
// refused, a stylesheet or script that failed to load.
const problems = [];
page.on('console', (m) => {
  if (m.type() === 'error' && /Content Security Policy|Refused to/.test(m.text())) problems.push(m.text());
});
page.on('pageerror', (e) => problems.push(String(e)));
page.on('response', (r) => {
  const t = r.request().resourceType();
  if ((t === 'stylesheet' || t === 'script' || t === 'image') && r.status() >= 400) problems.push(r.status() + ' ' + r.url());
});
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png'), fullPage: true });
const text = async (sel) => (await page.locator(sel).innerText()).replace(/\s+/g, ' ').trim();

try {
  step('sign in');
  await page.goto(LINK);
  await page.click('#signin');
  await page.waitForURL(D);

  step('the Customers page lists the customer with its balance');
  await page.click('nav a[href$="/customers"]');
  await page.waitForURL(D + 'customers');
  assert.match(await text(`tr[data-customer="${CUSTOMER}"]`), /USD 998\.66 USD 998\.66 USD 0\.00 USD 0\.00 1/);
  await shot('customers');

  step('look up a customer never seen: zeros, and where to deposit');
  await page.fill('#find-customer input[name=id]', 'cus_never_seen');
  await page.click('#find-customer button');
  await page.waitForURL(D + 'customers/cus_never_seen');
  for (const id of ['#available', '#onchain', '#reserved', '#withdrawal']) {
    assert.match(await text(id), /^USD 0\.00/, id);
  }
  assert.match(await text('#customer-ref'), /^0x[0-9a-f]{64}$/);
  assert.match(await text('#contract'), /^0x[0-9a-f]{40}$/);
  assert.match(await text('#deposit'), new RegExp('chain id ' + CHAIN_ID + '\\b'));
  assert.match(await page.locator('ol.howto').innerText(), /deposit\(bytes32 ref, address owner, uint256 amount\)[\s\S]*depositWithAuthorization\(/);
  assert.match(await text('#owner-rule'), /the only address that can withdraw/);
  await shot('customer-new');

  step('from the customer to its Settled workflow');
  await page.goto(D + 'customers/' + CUSTOMER);
  assert.match(await text('#available'), /^USD 998\.66/);
  await page.click(`#customer-workflows a[href$="/workflows/${WF}"]`);
  await page.waitForURL(D + 'workflows/' + WF);
  assert.equal(await text('#status'), 'Settled');
  assert.equal(await page.inputValue('#refund-amount'), '1.34');
  assert.match(await text('#refunds tbody'), /No refunds/);

  step('a refund of 0.50: reviewed, then confirmed');
  await page.fill('#refund-amount', '0.50');
  await page.fill('#refund-reason', 'answered twice');
  await page.click('#refund-review');
  assert.equal(await text('h1'), 'Confirm the refund');
  assert.equal(await text('#refund-confirm'), `Refund $0.50 of ${WF} to ${CUSTOMER}`);
  await shot('refund-review');
  await page.click('#refund-confirm');
  await page.waitForURL((u) => u.pathname.endsWith('/workflows/' + WF) && u.searchParams.get('refund'));
  const refundID = new URL(page.url()).searchParams.get('refund');
  assert.match(await text('.notice'), new RegExp(`Refund ${refundID} of \\$0\\.50 to ${CUSTOMER} recorded`));
  assert.match(await text(`tr[data-refund="${refundID}"]`), /\$0\.50 (Pending|Succeeded).* answered twice/);

  step('it succeeds, and the balance grows by it');
  await until('the refund to succeed', async () => {
    await page.goto(D + 'workflows/' + WF);
    return /Succeeded/.test(await text(`tr[data-refund="${refundID}"]`));
  });
  assert.match(await text('#refunded'), /^USD 0\.50/);
  assert.equal(await page.inputValue('#refund-amount'), '0.84');
  await shot('workflow-refunded');
  await page.click('#customer');
  await page.waitForURL(D + 'customers/' + CUSTOMER);
  assert.match(await text('#available'), /^USD 999\.16/);
  await shot('customer-refunded');

  step('too much: refused, nothing made');
  await page.goto(D + 'workflows/' + WF);
  await page.fill('#refund-amount', '5');
  await page.click('#refund-review');
  assert.match(await text('.error'), /more than is left to refund/);
  assert.equal(await page.locator('#refunds tbody tr').count(), 1);
  await shot('refund-too-much');

  assert.deepEqual(problems, [], 'script errors, CSP refusals or assets that failed to load');
  console.log('ok');
} finally {
  await browser.close();
}
