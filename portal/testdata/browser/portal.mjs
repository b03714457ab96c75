// Drives the customer portal in headless Chromium (Debian's, through
// playwright-core) as a customer with a wallet would. The wallet is an
// EIP-1193 provider injected into the page (window.ethereum), backed by a
// test key: viem signs typed data here, in node; eth_sendTransaction is
// forwarded to a test-only hook of portal/browser_test.go, which signs
// with the same key and sends to the embedded simulated chain (which has
// no RPC endpoint a browser could reach). Environment:
//   LINK (a portal link), BASE (the portal's https://host:port),
//   HOOK (the test hook's http://host:port), KEY (the wallet's key, 0x-hex),
//   CHAIN_ID, OUT (screenshots), CHROMIUM (executable), LINK2 (another
//   link of the same customer, for the login CSRF from another origin).
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

const { LINK, LINK2, BASE, HOOK, KEY, CHAIN_ID, OUT, CHROMIUM } = process.env;
const P = BASE + '/portal/';
const account = privateKeyToAccount(KEY);
const stranger = privateKeyToAccount(generatePrivateKey()); // another account of the same wallet
let current = account; // the account the wallet shares
const step = (name) => console.log('step:', name);
const until = async (what, fn, ms = 60000) => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 200));
  }
};
const hook = async (path, body) => {
  const r = await fetch(HOOK + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body || {}) });
  const out = await r.json();
  if (!r.ok) throw Object.assign(new Error(out.message || 'hook ' + path + ': ' + r.status), { code: out.code });
  return out;
};

// The wallet, as the page sees it through window.ethereum.
let walletChain = 1; // starts on another chain: the page must offer to switch
const calls = [];
async function wallet(method, params) {
  calls.push(method);
  switch (method) {
    case 'eth_requestAccounts':
    case 'eth_accounts':
      // In lowercase, as many wallets share it: the page checksums it.
      return [current.address.toLowerCase()];
    case 'eth_chainId':
      return '0x' + walletChain.toString(16);
    case 'wallet_switchEthereumChain':
      walletChain = Number(params[0].chainId);
      return null;
    case 'eth_signTypedData_v4': {
      assert.equal(params[0].toLowerCase(), account.address.toLowerCase());
      const td = JSON.parse(params[1]);
      assert.equal(Number(td.domain.chainId), walletChain, 'asked to sign for another chain than the wallet is on');
      const types = { ...td.types };
      delete types.EIP712Domain;
      return account.signTypedData({ domain: td.domain, types, primaryType: td.primaryType, message: td.message });
    }
    case 'eth_sendTransaction': {
      const tx = params[0];
      assert.equal(tx.from.toLowerCase(), account.address.toLowerCase());
      return (await hook('/send', { from: tx.from, to: tx.to, data: tx.data, chainId: walletChain })).hash;
    }
  }
  throw Object.assign(new Error('unsupported method ' + method), { code: 4200 });
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1100, height: 900 } });
await context.exposeFunction('__testWallet', async (method, params) => {
  try {
    return { result: await wallet(method, params) };
  } catch (e) {
    return { error: { code: e.code || -32603, message: e.message } };
  }
});
await context.addInitScript(() => {
  const handlers = {};
  window.ethereum = {
    isTestWallet: true,
    on(ev, fn) { (handlers[ev] = handlers[ev] || []).push(fn); },
    removeListener(ev, fn) { handlers[ev] = (handlers[ev] || []).filter((f) => f !== fn); },
    // The test's hand on the wallet: what a wallet emits when its user
    // switches accounts or networks.
    __emit(ev, arg) { for (const fn of handlers[ev] || []) fn(arg); },
    request: async ({ method, params }) => {
      const out = await window.__testWallet(method, params || []);
      if (out.error) throw Object.assign(new Error(out.error.message), { code: out.error.code });
      if (method === 'wallet_switchEthereumChain') setTimeout(() => window.ethereum.__emit('chainChanged', params[0].chainId), 0);
      return out.result;
    },
  };
});
const page = await context.newPage();
const errors = [];
page.on('pageerror', (e) => errors.push(String(e)));
page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text()); });
// Every failed request but the refusal the test asks for is an error.
page.on('response', (r) => {
  if (r.status() >= 400 && !(r.status() === 400 && r.url().endsWith('/portal/deposit/prepare'))) errors.push(r.status() + ' ' + r.url());
});
const shot = (name) => page.screenshot({ path: join(OUT, name + '.png'), fullPage: true });
const text = async (sel) => (await page.locator(sel).innerText()).replace(/\s+/g, ' ').trim();
// buttons is which of the withdrawal buttons are on, and the reasons shown.
const buttons = () => page.evaluate(() => {
  const on = (id) => !document.getElementById(id).disabled;
  const why = (id) => { const e = document.getElementById(id); return e.hidden ? '' : e.textContent; };
  return { request: on('request-withdrawal'), cancel: on('cancel-withdrawal'), withdraw: on('withdraw'),
    deposit: on('deposit'), why: [why('request-why'), why('cancel-why'), why('withdraw-why')].filter(Boolean).join(' | ') };
});
const expectButtons = async (what, want, whyMatch) => until(what, async () => {
  const b = await buttons();
  return b.request === want.request && b.cancel === want.cancel && b.withdraw === want.withdraw &&
    (!whyMatch || whyMatch.test(b.why)) ? b : false;
}, 15000).catch(async (e) => { throw new Error(e.message + ': ' + JSON.stringify(await buttons())); });
// Loads of the account page: the activity list must follow without one.
let loads = 0;

try {
  step('open the link');
  await page.goto(LINK);
  await shot('signin');
  await page.click('#open');
  await page.waitForURL(P);
  // What a customer reads: the operator's name, no internal id, the
  // network in plain words.
  assert.equal(await text('#brand'), 'Acme Compute');
  assert.ok(await page.evaluate(() => document.querySelector('#brand img.logo').naturalWidth > 0), 'the logo is not shown');
  assert.ok(!(await text('header')).includes('cus_'), 'a customer id in the header');
  assert.equal(await text('#network'), 'Network: Test network');
  assert.equal(await text('#available'), '$0.00');
  assert.ok(await page.locator('#no-owner').isVisible());
  assert.equal(await text('#activity'), 'Nothing yet.');
  await expectButtons('no owner: nothing to withdraw', { request: false, cancel: false, withdraw: false }, /No wallet owns this balance yet/);
  page.on('load', () => loads++);
  await shot('account');

  step('connect on the wrong chain: the page offers to switch');
  await page.click('#connect');
  await until('the wrong-chain message', async () => (await text('#wallet-state')).includes('Switch your wallet'));
  assert.ok(await page.locator('#switch-chain').isVisible());
  await shot('wrong-chain');
  await page.click('#switch-chain');
  await until('the switch', async () => (await text('#wallet-state')).includes('chain ' + CHAIN_ID));
  assert.equal(walletChain, Number(CHAIN_ID));

  step('connect: the wallet signs the owner grant');
  await page.click('#connect');
  // "Connected: … once the network confirms it", or already "Confirmed"
  // when the owner was followed before this poll saw the first line.
  await until('connected', async () => /Connected|Confirmed/.test(await text('#wallet-state')));
  await until('the owner on chain', async () => (await page.evaluate(() => document.body.dataset.owner || '')).toLowerCase() === account.address.toLowerCase());
  // The pending line gives way to the confirmed owner.
  await until('the pending line replaced', async () => !(await text('#wallet-state')).includes('once the network confirms'));
  assert.match(await text('#wallet-state'), /Confirmed/);
  // Checksummed (EIP-55), though the wallet shared it in lowercase.
  assert.ok((await text('#owner-line')).includes(account.address), await text('#owner-line'));
  await expectButtons('owner connected, nothing under notice', { request: true, cancel: false, withdraw: false }, /Nothing is under notice/);
  // The connect shows in the activity list without a reload.
  await until('the connect in the activity', async () => (await page.locator('#activity tr.line-owner_set').count()) === 1);
  await shot('connected');

  step('a deposit that is not whole cents is refused on the page');
  await page.fill('#deposit-amount', '25.001');
  await page.click('#deposit');
  await until('the refusal', async () => (await text('#deposit-error')).includes('two digits'));
  await shot('deposit-refused');

  step('deposit 25.00: pending, then available without a reload');
  await page.fill('#deposit-amount', '25.00');
  await page.click('#deposit');
  const states = [];
  let availableLine = ''; // read as soon as it says available: it fades after 20 s
  await until('available', async () => {
    const s = await page.locator('#relays li').first().getAttribute('data-state').catch(() => null);
    if (s && states[states.length - 1] !== s) {
      states.push(s);
      if (states.length === 1) await shot('deposit-pending');
    }
    if (s === 'available' && !availableLine) availableLine = await text('#relays li').catch(() => '');
    return s === 'available' && (await text('#available')) === '$25.00';
  });
  // The activity list shows the deposit without a reload, and the status
  // line says when it became available.
  await until('the deposit in the activity', async () => (await page.locator('#activity tr.line-deposit').count()) === 1);
  assert.match(availableLine, /available at \d\d:\d\d:\d\d UTC; it is in Recent activity below/);
  assert.equal(loads, 0, 'the account page was reloaded');
  console.log('deposit states seen:', states.join(' → '));
  assert.ok(states.length >= 2 && states[states.length - 1] === 'available', 'states ' + states);
  await shot('deposit-available');

  step('run a workflow and see it on the statement');
  const wf = await hook('/workflow');
  await page.goto(P + 'statement');
  await until('the charge on the statement', async () => {
    await page.reload();
    return (await page.locator('tr.line-charge').count()) === 1;
  });
  const row = await text('tr.line-charge');
  assert.ok(row.includes('report') && row.includes('−$' + (wf.charged / 100).toFixed(2)), row);
  assert.equal(await page.locator('tr.line-deposit').count(), 1);
  await shot('statement');
  const day = new Date().toISOString().slice(0, 10);
  const csv = await (await page.request.get(P + 'statement.csv?from=' + day + '&to=' + day)).text();
  const lines = csv.trim().split('\n');
  console.log('csv:\n' + csv);
  assert.ok(lines.length >= 3, 'csv rows ' + lines.length); // header, connect, deposit, charge

  step('request a withdrawal: the wallet sends it; the notice counts down');
  await page.goto(P);
  // A deposit available before the page opened is in the activity only.
  assert.equal(await page.locator('#relays li').count(), 0);
  assert.equal(await page.locator('#activity tr.line-deposit').count(), 1);
  await expectButtons('owner, nothing under notice', { request: true, cancel: false, withdraw: false });
  // Every line the page shows of a step sent from the wallet.
  await page.evaluate(() => {
    const el = document.getElementById('withdrawal-sent');
    window.__sent = [];
    new MutationObserver(() => { if (!el.hidden) window.__sent.push(el.textContent); })
      .observe(el, { childList: true, characterData: true, subtree: true, attributes: true });
  });
  await page.fill('#withdraw-amount', '10.00');
  await page.click('#request-withdrawal');
  // Pending from the wallet's send until the chain shows it, then confirmed.
  await until('the request confirmed', async () => {
    const seen = await page.evaluate(() => window.__sent);
    return seen.some((l) => /^Withdrawal request of \$10\.00: pending/.test(l)) && seen.some((l) => /Confirmed/.test(l));
  });
  await until('the countdown', async () => (await text('#countdown')).startsWith('Available in'));
  await expectButtons('under notice', { request: true, cancel: true, withdraw: false }, /Still under notice: available in \d\d:\d\d:\d\d/);
  // The balance follows the chain at the environment's depth.
  await until('under notice', async () => (await text('#pendingWithdrawal')) === '$10.00');
  await shot('withdrawal-requested');

  step('cancel it');
  await page.click('#cancel-withdrawal');
  await until('canceled', async () => (await page.evaluate(() => document.body.dataset.withdrawalPending)) === '0');
  assert.equal(await text('#countdown'), '');
  await expectButtons('canceled', { request: true, cancel: false, withdraw: false }, /Nothing is under notice/);
  await until('the cancel in the activity', async () => (await page.locator('#activity tr.line-withdrawal_canceled').count()) === 1);
  await shot('withdrawal-canceled');

  step('request 5.00 and withdraw it once due');
  await page.fill('#withdraw-amount', '5.00');
  await page.click('#request-withdrawal');
  await until('under notice', async () => (await text('#pendingWithdrawal')) === '$5.00');
  await expectButtons('under notice', { request: true, cancel: true, withdraw: false }, /Still under notice/);
  await until('due', async () => (await text('#countdown')).startsWith('Due now'), 40000);
  await expectButtons('due', { request: true, cancel: true, withdraw: true });
  await shot('withdrawal-due');
  await page.click('#withdraw');
  await until('withdrawn', async () => (await page.evaluate(() => document.body.dataset.withdrawalPending)) === '0' &&
    (await text('#pendingWithdrawal')) === '$0.00');
  await until('the withdrawal in the activity', async () => (await page.locator('#activity tr.line-withdrawn').count()) === 1);
  await expectButtons('withdrawn', { request: true, cancel: false, withdraw: false }, /Nothing is under notice/);
  await shot('withdrawn');

  step('switch accounts in the wallet: the page follows without a reload');
  const loadsBefore = loads;
  current = stranger;
  await page.evaluate((a) => window.ethereum.__emit('accountsChanged', [a]), stranger.address.toLowerCase());
  await until('the new account', async () => (await text('#wallet-state')).includes('Your wallet now uses ' + stranger.address));
  await expectButtons('another account', { request: false, cancel: false, withdraw: false },
    new RegExp('Only the wallet that owns this balance \\(' + account.address + '\\) can do this; yours is ' + stranger.address));
  await shot('account-switched');
  current = account;
  await page.evaluate((a) => window.ethereum.__emit('accountsChanged', [a]), account.address.toLowerCase());
  await expectButtons('the owner again', { request: true, cancel: false, withdraw: false });

  step('switch networks in the wallet: the page follows');
  walletChain = 1;
  await page.evaluate(() => window.ethereum.__emit('chainChanged', '0x1'));
  await until('the other network', async () => (await text('#wallet-state')).includes('another network') && await page.locator('#switch-chain').isVisible());
  await shot('network-switched');
  await page.click('#switch-chain');
  await until('back on the chain', async () => !(await page.locator('#switch-chain').isVisible()) && (await text('#wallet-state')).includes('chain ' + CHAIN_ID));
  assert.equal(walletChain, Number(CHAIN_ID));
  assert.equal(loads, loadsBefore, 'the account page was reloaded');

  step('sign out: the form posts Origin: null from the page, and it works');
  await page.click('#signout');
  await until('signed out', async () => (await page.content()).includes('You are signed out'));
  await shot('signed-out');
  assert.equal((await page.request.get(P)).status(), 401);

  step('login CSRF: another origin\'s page posts a link to the sign-in; refused, no session');
  const evil = await browser.newContext({ ignoreHTTPSErrors: true });
  const pe = await evil.newPage();
  const token2 = new URL(LINK2).searchParams.get('token');
  await pe.goto(HOOK + '/evil?token=' + encodeURIComponent(token2));
  await until('the refusal', async () => (await pe.content()).includes('another site'));
  await pe.screenshot({ path: join(OUT, 'login-csrf-refused.png'), fullPage: true });
  assert.equal((await pe.request.get(P)).status(), 401, 'the hostile page signed the browser in');
  // The link was not spent: its customer opens it from the portal's page.
  await pe.goto(LINK2);
  await pe.click('#open');
  await pe.waitForURL(P);
  assert.equal(await pe.locator('#brand').innerText(), 'Acme Compute');
  await evil.close();

  step('the link used twice: a clear page, nothing opened');
  const other = await browser.newContext({ ignoreHTTPSErrors: true });
  const p2 = await other.newPage();
  await p2.goto(LINK);
  await p2.click('#open');
  assert.match(await p2.locator('#error').innerText(), /expired or was used already/);
  await p2.screenshot({ path: join(OUT, 'link-used.png'), fullPage: true });
  assert.equal((await p2.request.get(P)).status(), 401);

  assert.deepEqual(errors, [], 'errors in the page');
  console.log('wallet calls:', [...new Set(calls)].join(', '));
} catch (e) {
  await shot('failure').catch(() => {});
  throw e;
} finally {
  await browser.close();
}
