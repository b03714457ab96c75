// Drives a customer's page of the dashboard in headless Chromium (Debian's,
// through playwright-core), as an operator would: the owner, an owner
// change proposed, the withdrawal under notice, the customer events and
// the portal's activity; then "Preview portal", which opens a read-only
// session of the customer's portal. Run by
// dashboard/portal_browser_test.go with:
//   BASE (https://host:port, the dashboard and the portal), LINK (a
//   dashboard sign-in link), CUSTOMER, OWNER (the owner, checksummed), NEXT
//   (the owner proposed), OUT (screenshot directory), CHROMIUM (executable).
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { join } from 'node:path';

const { BASE, LINK, CUSTOMER, OWNER, NEXT, OUT, CHROMIUM } = process.env;
const D = BASE + '/dashboard/';
const step = (name) => console.log('step:', name);

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
// What must not happen on any page: a script error, something the CSP
// refused, a stylesheet or script that failed to load.
const problems = [];
const watch = (page) => {
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('response', (r) => {
    const t = r.request().resourceType();
    if ((t === 'stylesheet' || t === 'script' || t === 'image') && r.status() >= 400) problems.push(r.status() + ' ' + r.url());
  });
};
const page = await context.newPage();
watch(page);
const shot = (p, name) => p.screenshot({ path: join(OUT, name + '.png'), fullPage: true });
const text = async (p, sel) => (await p.locator(sel).innerText()).replace(/\s+/g, ' ').trim();

let current = page;
try {
  step('sign in');
  await page.goto(LINK);
  await page.click('#signin');
  await page.waitForURL(D);

  step("the customer's page: owner, owner change, withdrawal, events, portal activity");
  await page.goto(D + 'customers/' + CUSTOMER);
  assert.equal(await text(page, '#owner code'), OWNER);
  assert.match(await text(page, '#owner-change'), new RegExp(NEXT + ' proposed: it owns the balance from \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC'));
  assert.match(await text(page, '#withdrawal-notice'), /^USD 12\.34, due \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  assert.match(await text(page, '#withdrawal'), /USD 12\.34/);
  assert.match(await text(page, '#portal-sessions'), /^1 the last at /);
  assert.equal(await text(page, '#portal-connects'), '0');
  assert.equal(await text(page, '#portal-relays'), '0');
  const owned = await text(page, '#customer-events tr.ev-customer\\.owner_set');
  assert.match(owned, new RegExp('owner set to ' + OWNER));
  assert.match(await text(page, '#customer-events tr.ev-customer\\.withdrawal_requested'), /USD 12\.34 under withdrawal notice, due /);
  assert.match(await text(page, '#customer-events tr.ev-customer\\.funded'), /USD 50\.00 deposited/);
  // Newest first: the withdrawal request after the owner, the deposit first.
  const types = await page.locator('#customer-events tbody tr td:nth-child(2)').allInnerTexts();
  assert.deepEqual(types, ['customer.withdrawal_requested', 'customer.owner_set', 'customer.funded']);
  await shot(page, 'customer-owner');

  step('preview the portal: a one-time read-only link');
  await page.click('#preview-portal');
  await page.waitForSelector('#open-preview');
  const href = await page.getAttribute('#open-preview', 'href');
  assert.ok(href.startsWith(BASE + '/portal/signin?token='), href);
  await shot(page, 'portal-preview-link');
  const [preview] = await Promise.all([context.waitForEvent('page'), page.click('#open-preview')]);
  current = preview;
  watch(preview);
  await preview.waitForLoadState();
  await preview.click('#open');
  await preview.waitForSelector('#preview');
  assert.match(await text(preview, '#preview'), /Read-only preview/);
  assert.equal(await text(preview, '#pendingWithdrawal'), '$12.34');
  assert.match(await text(preview, '#wallet'), new RegExp('owned by ' + OWNER));
  // Nothing to do from a preview: no connect, deposit or withdrawal.
  for (const sel of ['#connect', '#deposit-form', '#withdraw-form']) assert.equal(await preview.locator(sel).count(), 0, sel);
  await shot(preview, 'portal-preview');

  step('the preview is no session of the customer');
  await page.goto(D + 'customers/' + CUSTOMER);
  assert.match(await text(page, '#portal-sessions'), /^1 the last at /);

  assert.deepEqual(problems, []);
  console.log('ok');
} catch (e) {
  await shot(current, 'failed').catch(() => {});
  throw e;
} finally {
  await browser.close();
}
