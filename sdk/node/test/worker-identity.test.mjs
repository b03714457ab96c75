// A worker says who it is on every claim (docs/api.md §16): its host, its
// name (pid-N unless given) and this library's version. The server's side,
// with the dashboard that shows it, is tested in Go (dashboard's
// TestWorkersInChromium).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { hostname } from 'node:os';
import * as sdk from '../src/index.js';

const key = 'rk_test_' + 'Q'.repeat(36) + 'a1b2';

async function firstClaim(options) {
  const bodies = [];
  const srv = http.createServer((req, res) => {
    let b = '';
    req.on('data', (c) => (b += c));
    req.on('end', () => {
      bodies.push({ path: req.url, body: JSON.parse(b) });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ object: 'list', url: '/v1/tasks/claim', data: [], hasMore: false }));
    });
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const c = new sdk.Settleflow({ apiKey: key, baseUrl: `http://127.0.0.1:${srv.address().port}` });
  const w = new sdk.Worker(c, { wait: 0, ...options });
  w.handle('ticket-triage', async () => ({ result: {} }));
  const done = w.run({ handleSignals: false });
  for (let i = 0; i < 500 && bodies.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  w.stop();
  await done;
  c.close();
  await new Promise((r) => srv.close(r));
  assert.ok(bodies.length > 0, 'no claim came');
  assert.equal(bodies[0].path, '/v1/tasks/claim');
  return bodies[0].body;
}

test('a worker sends its hostname, pid-N and the library version on claim', async () => {
  const body = await firstClaim({});
  assert.deepEqual(body.worker, { host: hostname(), name: `pid-${process.pid}`, sdk: `settleflow-node/${sdk.VERSION}` });
});

test('a worker sends the name and host it is given; a name that is not a string is refused', async () => {
  const body = await firstClaim({ name: 'triage-1', host: 'box-7' });
  assert.deepEqual(body.worker, { host: 'box-7', name: 'triage-1', sdk: `settleflow-node/${sdk.VERSION}` });
  const c = new sdk.Settleflow({ apiKey: key, baseUrl: 'http://127.0.0.1:1' });
  assert.throws(() => new sdk.Worker(c, { name: 7 }), /name must be a string/);
  c.close();
});
