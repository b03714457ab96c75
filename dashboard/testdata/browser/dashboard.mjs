// Drives the dashboard of a running reference server in headless Chromium
// (Debian's, through playwright-core), as an operator would, and checks each
// step against the API. Run by dashboard/browser_test.go, which starts the
// server and a webhook receiver and passes:
//   BASE (https://host:port), LINK (a sign-in link), FIRST_KEY (a test API
//   key), RECEIVER_URL, OUT (screenshot directory), CHROMIUM (executable).
// The server's certificate is trusted through NODE_EXTRA_CA_CERTS.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { join } from 'node:path';

const { BASE, LINK, FIRST_KEY, RECEIVER_URL, OUT, CHROMIUM } = process.env;
const D = BASE + '/dashboard/';

const api = async (path, key, body) => {
  const r = await fetch(BASE + path, {
    method: body ? 'POST' : 'GET',
    headers: { Authorization: 'Bearer ' + key, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, json: await r.json() };
};
const until = async (what, fn, ms = 30000) => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 250));
  }
};
const step = (name) => console.log('step:', name);

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
const page = await context.newPage();
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png'), fullPage: true });
const rowText = async (sel) => (await page.locator(sel).innerText()).replace(/\s+/g, ' ');

try {
  step('sign in with the printed link');
  await page.goto(LINK);
  await shot('signin');
  await page.click('#signin');
  await page.waitForURL(D);
  await shot('overview');
  const csp = (await page.request.get(D)).headers()['content-security-policy'];
  assert.match(csp, /script-src 'self'/);

  step('create a key and use it against the API');
  await page.goto(D + 'keys');
  await page.fill('#create-key input[name=name]', 'browser');
  await page.click('#create-key button');
  const secret = (await page.textContent('#secret')).trim();
  assert.match(secret, /^sk_test_[0-9A-Za-z]{40}$/);
  const keyID = (await page.textContent('.notice')).match(/key_[0-9A-Z]+/)[0];
  await shot('keys-created');
  assert.equal((await api('/v1/workflows?limit=1', secret)).status, 200);

  step('see its last use appear');
  await until('the last use', async () => {
    await page.goto(D + 'keys');
    return !(await rowText(`tr[data-key="${keyID}"] .last-used`)).includes('never');
  });
  await page.goto(D + 'keys');
  assert.ok(!(await page.content()).includes(secret), 'the secret is shown again');

  step('rotate it: both keys work until the old one expires');
  const row = page.locator(`tr[data-key="${keyID}"]`);
  await row.locator('select[name=expireIn]').selectOption('1h');
  await row.locator('button.rotate').click();
  const rotated = (await page.textContent('#secret')).trim();
  const newID = (await page.textContent('.notice')).match(/into (key_[0-9A-Z]+)/)[1];
  await shot('keys-rotated');
  assert.equal((await api('/v1/workflows?limit=1', secret)).status, 200);
  assert.equal((await api('/v1/workflows?limit=1', rotated)).status, 200);
  assert.match(await rowText(`tr[data-key="${keyID}"] .state`), new RegExp('rotated into ' + newID));

  step('revoke the new key: 401');
  const nrow = page.locator(`tr[data-key="${newID}"]`);
  await nrow.locator('input[name=confirm]').fill(newID);
  await nrow.locator('button.revoke').click();
  await page.waitForSelector('.notice');
  assert.equal((await api('/v1/workflows?limit=1', rotated)).status, 401);

  step('register a webhook endpoint');
  await page.goto(D + 'webhooks');
  await page.fill('#add-endpoint input[name=url]', RECEIVER_URL);
  await page.click('#add-endpoint button');
  assert.match((await page.textContent('#secret')).trim(), /^whsec_/);
  await shot('webhooks-added');

  step('a workflow settles and its delivery appears with its attempts');
  const created = await api('/v1/workflows', FIRST_KEY,
    { product: 'ticket-triage', customerId: 'cus_browser', payload: { ticketId: 'T-1', subject: 'Refund please' } });
  assert.equal(created.status, 201);
  const wfID = created.json.id;
  await until('Settled', async () => (await api('/v1/workflows/' + wfID, FIRST_KEY)).json.status === 'Settled', 60000);
  await until('a delivery', async () => {
    await page.goto(D + 'webhooks');
    return (await page.locator('#deliveries td.dstatus', { hasText: 'succeeded' }).count()) > 0;
  });
  await shot('webhooks-delivered');
  await page.locator('#deliveries a').first().click();
  await page.waitForURL(/\/dashboard\/deliveries\/[^/]+$/);
  const deliveryURL = page.url();
  assert.ok((await page.locator('#attempts tbody tr').count()) >= 1);
  assert.match(await rowText('#attempts tbody tr'), /HTTP 200/);
  await shot('delivery');

  step('resend it');
  // The resend is a form POST answered by a redirect to the delivery: wait for
  // that navigation to finish before loading the page again, or the reload
  // races it ("Not attached to an active page").
  await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/resend')),
    page.click('#resend'),
  ]);
  await page.waitForURL(deliveryURL);
  await until('the resend', async () => {
    await page.goto(deliveryURL);
    return (await page.locator('#attempts tbody tr').count()) >= 2;
  });
  await shot('delivery-resent');

  step('open the Settled workflow: its transaction');
  await page.goto(D + 'workflows');
  await shot('workflows');
  await page.goto(D + 'workflows/' + wfID);
  assert.equal((await page.textContent('#status')).trim(), 'Settled');
  assert.match((await page.textContent('#tx')).trim(), /^0x[0-9a-f]{64}$/);
  assert.match((await page.textContent('#cost')).trim(), /^[1-9][0-9]* gas, [0-9.]+ in/);
  await shot('workflow');

  step('its customer: balance and deposit instructions');
  await page.click('#customer');
  await page.waitForURL(D + 'customers/cus_browser');
  assert.equal((await page.textContent('h1')).trim(), 'cus_browser');
  assert.match((await page.textContent('#available')).trim(), /^USD -?[0-9]+\.[0-9]{2}/);
  assert.ok((await page.locator(`#customer-workflows a[href$="/workflows/${wfID}"]`).count()) === 1);
  await shot('customer');
  await page.goto(D + 'customers');
  assert.ok((await page.locator('tr[data-customer="cus_browser"]').count()) === 1);
  await shot('customers');
  await page.goto(D);
  assert.match(await rowText('#margins tbody'), /ticket-triage 1 30\.00%/);
  await shot('overview-settled');

  step('switch to live: no test data');
  await page.click('#to-live');
  await page.waitForURL(D);
  await shot('overview-live');
  await page.goto(D + 'keys');
  assert.ok(!(await page.content()).includes(keyID), 'a test key in live mode');
  await page.goto(D + 'workflows');
  assert.ok(!(await page.content()).includes(wfID), 'a test workflow in live mode');
  await page.goto(D + 'webhooks');
  assert.ok((await page.content()).includes('No endpoints in this mode.'));
  await shot('webhooks-live');

  step('sign out');
  await page.click('#to-test');
  await page.click('#signout');
  const r = await page.goto(D + 'keys');
  assert.equal(r.status(), 401);
  console.log('ok');
} finally {
  await browser.close();
}
