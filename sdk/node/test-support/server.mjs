// Test harness: builds the reference server (examples/server) once, starts it
// on loopback with its own data directory, keys and webhook endpoints, and
// stops it. Not a test file (node --test runs files under test/ only).
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rename, stat, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
export const SDK_DIR = path.resolve(here, '..');
export const REPO_ROOT = path.resolve(SDK_DIR, '..', '..');
const CACHE_DIR = path.join(SDK_DIR, 'node_modules', '.cache', 'settleflow-test-server');
const SKIP_DIRS = new Set(['.git', 'sdk', 'node_modules', 'settleflow-data', 'bin']);

async function newestSource(dir) {
  let newest = 0;
  for (const ent of await readdir(dir, { withFileTypes: true })) {
    if (ent.isDirectory()) {
      if (!SKIP_DIRS.has(ent.name)) newest = Math.max(newest, await newestSource(path.join(dir, ent.name)));
    } else if (ent.isFile()) {
      newest = Math.max(newest, (await stat(path.join(dir, ent.name))).mtimeMs);
    }
  }
  return newest;
}

let binaryPromise;

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function buildIfStale(bin) {
  const newest = await newestSource(REPO_ROOT);
  const built = await stat(bin).then((s) => s.mtimeMs, () => 0);
  if (built > newest) return;
  const tmp = `${bin}.${process.pid}.tmp`;
  await run('go', ['build', '-o', tmp, './examples/server'], { cwd: REPO_ROOT, maxBuffer: 16 << 20 }).catch((e) => {
    throw new Error(`go build ./examples/server failed (is Go on PATH?): ${e.message}\n${e.stderr ?? ''}`);
  });
  await rename(tmp, bin); // atomic: a test file starting now sees the old binary or the new one
}

/**
 * The server binary: $SETTLEFLOW_SERVER_BIN if set, else built from the
 * repository with `go build ./examples/server` into node_modules/.cache,
 * rebuilt only when a file of the repository (outside sdk/) is newer. Test
 * files running in parallel build it once: the first takes a lock directory,
 * the others wait for it.
 */
export function serverBinary() {
  binaryPromise ??= (async () => {
    if (process.env.SETTLEFLOW_SERVER_BIN) return process.env.SETTLEFLOW_SERVER_BIN;
    await mkdir(CACHE_DIR, { recursive: true });
    const bin = path.join(CACHE_DIR, 'server');
    const lock = path.join(CACHE_DIR, 'build.lock');
    for (let waited = 0; ; waited += 200) {
      try {
        await mkdir(lock);
      } catch (e) {
        if (e.code !== 'EEXIST') throw e;
        const age = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
        if (age > 10 * 60_000) await rm(lock, { recursive: true, force: true }); // left by a killed run
        else if (waited > 5 * 60_000) throw new Error('waited 5 minutes for ' + lock);
        await sleep(200);
        continue;
      }
      try {
        await buildIfStale(bin);
      } finally {
        await rm(lock, { recursive: true, force: true });
      }
      return bin;
    }
  })();
  return binaryPromise;
}

async function cli(bin, dataDir, args) {
  const { stdout } = await run(bin, ['-data', dataDir, ...args]);
  return stdout;
}

/**
 * Starts a server and returns { baseUrl, ca, certFile, keyFile, apiKey,
 * tinyKey, secrets, dataDir, addKey, addWebhook, stop }. apiKey is a test key
 * on the starter plan (300/minute); tinyKey an enterprise test key allowed 2
 * requests a minute. webhookUrls are registered as test endpoints before it
 * serves; secrets holds their whsec_ secrets in the same order. args are
 * more flags for the server (-remote NAMES); addKey(['--name', 'w',
 * '--kind', 'worker']) makes a worker key (rk_test_…).
 */
export async function startServer({ webhookUrls = [], args = [] } = {}) {
  const bin = await serverBinary();
  const dataDir = await mkdtemp(path.join(tmpdir(), 'settleflow-node-test-'));
  const addKey = async (args, env = 'test') => (await cli(bin, dataDir, ['keys', 'create', '--env', env, ...args])).trim().split('\n')[1].trim();
  const addWebhook = async (url) => {
    const out = await cli(bin, dataDir, ['webhooks', 'add', '--env', 'test', '--url', url]);
    const m = /(whsec_[A-Za-z0-9+/=]+)/.exec(out);
    if (!m) throw new Error('no secret in: ' + out);
    return m[1];
  };
  const apiKey = await addKey(['--name', 't']);
  const tinyKey = await addKey(['--name', 'tiny', '--plan', 'enterprise', '--per-minute', '2', '--per-day', '1000']);
  const secrets = [];
  for (const u of webhookUrls) secrets.push(await addWebhook(u));

  const child = spawn(
    bin,
    ['-data', dataDir, '-https', '127.0.0.1:0', '-http', '', '-log-level', 'warn', '-auth-failures-per-minute', '0', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  // The server must not outlive the test process, however that ends.
  const killOnExit = () => child.kill('SIGKILL');
  const onSignal = (sig) => {
    child.kill('SIGKILL');
    process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
    process.kill(process.pid, sig);
  };
  process.on('exit', killOnExit).on('SIGINT', onSignal).on('SIGTERM', onSignal);
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const baseUrl = await new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('server did not start in 15 s: ' + out + stderr)), 15_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /listening on (https:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}): ${out}${stderr}`));
    });
  });
  const certFile = path.join(dataDir, 'tls', 'cert.pem');
  const keyFile = path.join(dataDir, 'tls', 'key.pem');
  const ca = await readFile(certFile, 'utf8');
  return {
    baseUrl,
    ca,
    certFile,
    keyFile,
    apiKey,
    tinyKey,
    secrets,
    dataDir,
    addKey,
    addWebhook,
    stderr: () => stderr,
    async stop() {
      process.off('exit', killOnExit).off('SIGINT', onSignal).off('SIGTERM', onSignal);
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
