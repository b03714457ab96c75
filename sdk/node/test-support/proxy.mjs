// A TLS proxy in front of the real server, speaking HTTPS with the server's
// own certificate so the client under test uses the same `ca`. Each request is
// recorded; `decide(req, n)` (n counts requests from 1) chooses what happens:
//   'forward'          forward to the server and relay its answer
//   'drop-after-forward' forward, read the server's whole answer (it is
//                      committed), then cut the client's connection unanswered
//   'hang'             never answer (until the client gives up)
//   'destroy'          cut the connection at once, unanswered
//   { status, headers, body } answer this instead of forwarding
//   { afterForward: true, status, headers, body } forward, read the server's
//                      whole answer (it is committed), then answer this instead
import https from 'node:https';
import { readFile } from 'node:fs/promises';

export async function startProxy(server, decide = () => 'forward') {
  const [cert, key] = await Promise.all([readFile(server.certFile), readFile(server.keyFile)]);
  const upstream = new URL(server.baseUrl);
  const agent = new https.Agent({ keepAlive: true, ca: server.ca });
  const requests = [];
  const sockets = new Set();
  const proxy = https.createServer({ cert, key }, async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const n = requests.length + 1;
    const entry = { method: req.method, url: req.url, headers: req.headers, body: body.toString('utf8'), socket: req.socket, n };
    requests.push(entry);
    const action = await decide(entry, n);
    if (action === 'hang') return;
    if (action === 'destroy') {
      req.socket.destroy();
      return;
    }
    if (typeof action === 'object' && action !== null && !action.afterForward) {
      res.writeHead(action.status, { 'Content-Type': 'application/json', ...(action.headers ?? {}) });
      res.end(typeof action.body === 'string' ? action.body : JSON.stringify(action.body ?? {}));
      return;
    }
    const headers = { ...req.headers, host: upstream.host };
    delete headers.connection;
    const up = https.request(
      { hostname: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers, agent },
      async (ur) => {
        const out = [];
        for await (const c of ur) out.push(c);
        entry.upstreamStatus = ur.statusCode;
        entry.upstreamBody = Buffer.concat(out).toString('utf8');
        if (action === 'drop-after-forward') {
          req.socket.destroy();
          return;
        }
        if (typeof action === 'object' && action !== null) {
          res.writeHead(action.status, { 'Content-Type': 'application/json', ...(action.headers ?? {}) });
          res.end(typeof action.body === 'string' ? action.body : JSON.stringify(action.body ?? {}));
          return;
        }
        const h = { ...ur.headers };
        delete h.connection;
        delete h['transfer-encoding'];
        res.writeHead(ur.statusCode, h);
        res.end(Buffer.concat(out));
      },
    );
    // A client that gives up (an aborted claim) ends the forwarded request
    // too, as a server would see it: a claim left waiting upstream would take
    // a task for nobody.
    res.on('close', () => {
      if (!res.writableFinished) up.destroy();
    });
    up.on('error', (e) => {
      if (res.headersSent || res.destroyed) return;
      res.writeHead(502);
      res.end(String(e));
    });
    up.end(body);
  });
  const stats = { connections: 0, tlsErrors: 0 };
  proxy.on('tlsClientError', () => stats.tlsErrors++);
  proxy.on('connection', (s) => {
    stats.connections++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `https://127.0.0.1:${proxy.address().port}`,
    requests,
    stats,
    async close() {
      for (const s of sockets) s.destroy();
      agent.destroy();
      await new Promise((r) => proxy.close(r));
    },
  };
}
