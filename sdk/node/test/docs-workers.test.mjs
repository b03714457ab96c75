// docs/workers.md's Node.js worker, run as a reader would: the reference
// server with the page's products file (-products), a worker key limited to
// the product, and the page's worker.mjs as a process of its own; a workflow
// created with an ordinary key is Settled through it, and SIGTERM stops it
// cleanly. So the page's Node.js example cannot drift from what works.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, writeFile, copyFile, symlink, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Settleflow } from '../src/index.js';
import { startServer, SDK_DIR, REPO_ROOT } from '../test-support/server.mjs';

let server;
let client;
let dir;
let child;
let page;

before(async () => {
  page = await readFile(path.join(REPO_ROOT, 'docs', 'workers.md'), 'utf8');
  const products = [...page.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  assert.equal(products.length, 1, 'docs/workers.md has one products file');
  dir = await mkdtemp(path.join(tmpdir(), 'settleflow-node-docs-'));
  await writeFile(path.join(dir, 'products.json'), products[0]);
  server = await startServer({ args: ['-products', path.join(dir, 'products.json')] });
  client = new Settleflow({ apiKey: server.apiKey, baseUrl: server.baseUrl, ca: server.ca });
  await mkdir(path.join(dir, 'node_modules'));
  await symlink(SDK_DIR, path.join(dir, 'node_modules', 'settleflow'), 'dir');
  await mkdir(path.join(dir, 'settleflow-data', 'tls'), { recursive: true });
  await copyFile(server.certFile, path.join(dir, 'settleflow-data', 'tls', 'cert.pem'));
});
after(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  client?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("docs/workers.md's Node.js worker settles a workflow of the page's declared product", async () => {
  const blocks = [...page.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  assert.equal(blocks.length, 1, 'docs/workers.md has one js block');
  const first = blocks[0].split('\n')[0];
  assert.equal(first, '// worker.mjs: SETTLEFLOW_API_KEY=rk_test_… node worker.mjs');
  const code = blocks[0].replaceAll("'https://127.0.0.1:8443'", `'${server.baseUrl}'`);
  assert.ok(!code.includes('127.0.0.1:8443'));
  await writeFile(path.join(dir, 'worker.mjs'), code);
  const product = /worker\.handle\('([a-z0-9-]+)'/.exec(code)[1];
  const key = await server.addKey(['--name', 'summarizer', '--kind', 'worker', '--products', product]);
  child = spawn(process.execPath, ['worker.mjs'], { cwd: dir, env: { ...process.env, SETTLEFLOW_API_KEY: key }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve({ code, sig })));

  const wf = await client.workflows.create({ product, customerId: 'cus_docs_node', payload: { text: 'Revenue is up 12 %. Costs are flat.' } });
  let got;
  for (const end = Date.now() + 60_000; ; ) {
    got = await client.workflows.fetch(wf.id);
    if (['Settled', 'Failed'].includes(got.status)) break;
    assert.ok(Date.now() < end, `still ${got.status}: ${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(got.status, 'Settled', JSON.stringify(got) + output);
  assert.deepEqual(got.result, { summary: 'Revenue is up 12 %.' });
  assert.deepEqual([got.quoted.amount, got.charged.amount, got.cost.amount], [25, 25, 2]);
  assert.match(got.settlement.txHash, /^0x[0-9a-f]{64}$/);

  child.kill('SIGTERM');
  const end = await Promise.race([exited, new Promise((r) => setTimeout(() => r('timeout'), 30_000))]);
  assert.deepEqual(end, { code: 0, sig: null }, output);
});
