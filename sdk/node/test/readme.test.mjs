// The README's examples, run as a user would: its quickstart, operations and
// errors blocks as one script, and its node:http receiver, in a directory
// where `settleflow` is installed (a node_modules link to this package) and
// settleflow-data/tls/cert.pem is the test server's certificate. The only
// change to the code is the base URL (the test server's port, not 8443).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, writeFile, copyFile, symlink, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Settleflow, NotFoundError, webhooks } from '../src/index.js';
import { startServer, SDK_DIR } from '../test-support/server.mjs';

let server;
let dir;
const children = [];

function blocks(readme) {
  const out = {};
  for (const m of readme.matchAll(/^```js (\w+)\n([\s\S]*?)^```$/gm)) out[m[1]] = m[2];
  return out;
}

function run(file, env, onLine) {
  const child = spawn(process.execPath, [file], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const result = { stdout: '', stderr: '', code: null };
  child.stdout.on('data', (d) => {
    result.stdout += d;
    onLine?.(result.stdout);
  });
  child.stderr.on('data', (d) => (result.stderr += d));
  result.exited = new Promise((resolve) => child.on('exit', (code) => resolve((result.code = code))));
  return { child, result };
}

let readme;
before(async () => {
  readme = blocks(await readFile(path.join(SDK_DIR, 'README.md'), 'utf8'));
  server = await startServer();
  dir = await mkdtemp(path.join(tmpdir(), 'settleflow-node-readme-'));
  await mkdir(path.join(dir, 'node_modules'));
  await symlink(SDK_DIR, path.join(dir, 'node_modules', 'settleflow'), 'dir');
  await mkdir(path.join(dir, 'settleflow-data', 'tls'), { recursive: true });
  await copyFile(server.certFile, path.join(dir, 'settleflow-data', 'tls', 'cert.pem'));
});
after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const localize = (code) => {
  assert.ok(code.includes("'https://127.0.0.1:8443'") || !code.includes('8443'));
  return code.replaceAll("'https://127.0.0.1:8443'", `'${server.baseUrl}'`);
};

test('every js block of the README parses (the Express one cannot run here: express is not installed)', async () => {
  assert.deepEqual(Object.keys(readme).sort(), ['errors', 'express', 'money', 'operations', 'quickstart', 'receiver', 'worker'] /* worker: run by workers-api.test.mjs */);
  for (const [name, code] of Object.entries(readme)) {
    const file = path.join(dir, `check-${name}.mjs`);
    await writeFile(file, code);
    const check = spawn(process.execPath, ['--check', file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    check.stderr.on('data', (d) => (err += d));
    const exit = await new Promise((r) => check.on('exit', r));
    assert.equal(exit, 0, `${name}: ${err}`);
  }
  assert.match(readme.express, /express\.raw\(\{ type: 'application\/json' \}\)/);
});

test('the README quickstart, operations and errors examples run', async () => {
  for (const name of ['quickstart', 'operations', 'errors']) assert.ok(readme[name], `README block ${name}`);
  const file = path.join(dir, 'quickstart.mjs');
  await writeFile(file, localize(readme.quickstart + readme.operations + readme.errors));
  const { result } = run(file, { SETTLEFLOW_API_KEY: server.apiKey });
  const code = await result.exited;
  assert.equal(code, 0, result.stderr + result.stdout);
  assert.match(result.stdout, /^wf_\w{26} Pending \{ amount: 358, currency: 'usd' \}$/m);
  assert.match(result.stdout, /\[\s*'document-extraction',\s*'document-summary',\s*'image-moderation',\s*'lead-enrichment',\s*'ticket-resolution',\s*'ticket-triage'\s*\]/);
  assert.match(result.stdout, /^400 parameter_missing payload payload is required$/m);
  assert.match(result.stdout, /\/v1\/workflows\/\{id\}\/cancel/);
});

test('the README customer funds and refunds example runs, on a server that charges customer balances', async (t) => {
  assert.ok(readme.money);
  const probe = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
  let why = null;
  try {
    if ((await probe.customers.fetch('cus_readme_probe')).deposit === null) {
      why = 'the server does not charge customer balances (customer.deposit is null), as the reference server built from this repository does';
    }
  } catch (e) {
    if (!(e instanceof NotFoundError)) throw e;
    why = 'the server does not serve GET /v1/customers/{id}';
  } finally {
    probe.close();
  }
  if (why) {
    if (process.env.SETTLEFLOW_TEST_FUNDS === 'require') assert.fail(why);
    return t.skip(why);
  }
  const file = path.join(dir, 'money.mjs');
  await writeFile(file, localize(readme.quickstart + readme.money));
  const { result } = run(file, { SETTLEFLOW_API_KEY: server.apiKey });
  const code = await result.exited;
  assert.equal(code, 0, result.stderr + result.stdout);
  assert.match(result.stdout, /^402 insufficient_funds -?\d+ 286 usd cus_insufficient_funds$/m);
  assert.match(result.stdout, /^re_\w{26} Pending 100$/m);
  assert.match(result.stdout, /^(Pending|Succeeded) \{ amount: \d+, currency: 'usd' \}$/m);
});

test('the README node:http receiver verifies a real delivery and refuses a forged one', async () => {
  assert.ok(readme.receiver);
  const port = await new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });
  const url = `http://127.0.0.1:${port}/webhook`;
  const secret = await server.addWebhook(url);
  const file = path.join(dir, 'receiver.mjs');
  await writeFile(file, readme.receiver);
  let notify;
  const { result } = run(file, { SETTLEFLOW_WEBHOOK_SECRET: secret, PORT: String(port) }, (out) => notify?.(out));
  // Wait until it listens.
  for (let i = 0; ; i++) {
    const ok = await new Promise((resolve) => net.connect(port, '127.0.0.1').on('connect', function () { this.destroy(); resolve(true); }).on('error', () => resolve(false)));
    if (ok) break;
    assert.ok(i < 100, 'receiver did not listen: ' + result.stderr);
    await new Promise((r) => setTimeout(r, 50));
  }
  const client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
  const wf = await client.workflows.create({ product: 'ticket-triage', customerId: 'cus_' + randomUUID().slice(0, 8), payload: { ticketId: 'T-7', subject: 'Hi', attachments: 0 } });
  const line = new RegExp(`^workflow ${wf.id} settled, margin achieved (-?[0-9.]+)$`, 'm');
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('no delivery logged: ' + result.stdout + result.stderr)), 20_000);
    notify = (out) => line.test(out) && (clearTimeout(t), resolve());
    notify(result.stdout);
  });
  const settled = await client.workflows.fetch(wf.id);
  assert.equal(Number(line.exec(result.stdout)[1]), settled.margin.achieved);

  // A body signed with another secret is refused with 400.
  const body = JSON.stringify({ id: 'evt_forged', type: 'workflow.completed', data: {} });
  const forged = webhooks.generateTestHeader(body, 'whsec_' + Buffer.alloc(32, 1).toString('base64'));
  const res = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'service-signature': forged } });
  assert.equal(res.status, 400);
  await new Promise((r) => setTimeout(r, 100));
  assert.match(result.stderr, /refused a delivery: no_matching_signature/);
  client.close();
});
