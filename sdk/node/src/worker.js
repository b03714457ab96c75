// Workers: run remote products' tasks in this process (docs/api.md §16). A
// Worker claims the tasks of the products it has handlers for and runs each
// async handler with an AbortSignal, heartbeating its lease, until stop()
// (or SIGTERM / SIGINT).
import { hostname } from 'node:os';
import { AuthenticationError, ConflictError, InvalidRequestError, NotFoundError, PermissionError, SettleflowError } from './errors.js';
import { VERSION } from './version.js';

/**
 * Thrown by a handler: a failure that retrying will not mend. The workflow
 * fails for good (fail with retry false); any other error fails only this
 * attempt, which the server retries after its backoff.
 */
export class Permanent extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'Permanent';
  }
}

/**
 * Why a task was stopped, the reason of its handler's AbortSignal: `reason`
 * is 'lease_lost' (the server took it back), 'margin_floor_exceeded' (its
 * spend passed the budget: the workflow failed, nothing is charged) or
 * 'worker_stopped' (the worker stopped and the drain timeout passed; the task
 * is handed back to be retried).
 */
export class TaskStoppedError extends SettleflowError {
  constructor(reason, options) {
    super('the task was stopped: ' + reason, options);
    this.reason = reason;
  }
}

const LEASE_LOST = 'lease_lost';
const MARGIN_FLOOR_EXCEEDED = 'margin_floor_exceeded';
const WORKER_STOPPED = 'worker_stopped';

function stopReason(e) {
  if (e instanceof ConflictError && e.code === MARGIN_FLOOR_EXCEEDED) return MARGIN_FLOOR_EXCEEDED;
  if (e instanceof ConflictError || e instanceof NotFoundError) return LEASE_LOST;
  return null;
}

function failMessage(e) {
  let msg = (e && typeof e.message === 'string' && e.message) || String(e) || 'the handler failed';
  const bytes = Buffer.from(msg, 'utf8');
  if (bytes.length > 1024) msg = new TextDecoder('utf-8', { fatal: false }).decode(bytes.subarray(0, 1024)).replace(/\uFFFD$/, '');
  return msg || 'the handler failed';
}

function checkMs(name, v, min) {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min) throw new TypeError(`${name} must be a number of milliseconds >= ${min}`);
  return v;
}

// truncateUtf8 cuts s to at most n bytes of UTF-8, at a character boundary.
function truncateUtf8(s, n) {
  const b = Buffer.from(s, 'utf8');
  if (b.length <= n) return s;
  return new TextDecoder().decode(b.subarray(0, n)).replace(/\uFFFD$/, '');
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs async handlers for remote products' tasks: `concurrency` at once,
 * each task's lease extended every `heartbeatInterval` ms, a claim waiting up
 * to `wait` ms (at most 30 s) for a task. Once stopped it claims no more,
 * lets the tasks in flight finish within `drainTimeout` ms, then aborts the
 * signals of those left ('worker_stopped') and hands them back to the server.
 */
export class Worker {
  #client;
  #handlers = new Map();
  #stop = new AbortController();
  #running = new Map();
  #wake = null;
  #opts;

  constructor(client, options = {}) {
    if (!client || typeof client.tasks?.claim !== 'function') throw new TypeError('new Worker(client, options) takes a Settleflow client');
    const { concurrency = 4, heartbeatInterval = 10_000, wait = 20_000, drainTimeout = 30_000, logger, name, host, ...rest } = options ?? {};
    const unknown = Object.keys(rest);
    if (unknown.length) throw new TypeError(`unknown worker option ${JSON.stringify(unknown[0])}; the options are concurrency, heartbeatInterval, wait, drainTimeout, logger, name, host`);
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 100) throw new TypeError('concurrency must be an integer from 1 to 100');
    for (const [what, v] of [['name', name], ['host', host]]) {
      if (v !== undefined && typeof v !== 'string') throw new TypeError(`${what} must be a string`);
    }
    // What the worker says of itself on each claim (the server's dashboard
    // shows it): its host, its name (pid-N unless given), this library.
    this.identity = { host: truncateUtf8(host ?? hostname(), 255), name: name ?? `pid-${process.pid}`, sdk: `settleflow-node/${VERSION}` };
    this.#client = client;
    this.#opts = {
      concurrency,
      heartbeatInterval: checkMs('heartbeatInterval', heartbeatInterval, 1),
      waitSeconds: Math.min(Math.floor(checkMs('wait', wait, 0) / 1000), 30),
      drainTimeout: checkMs('drainTimeout', drainTimeout, 0),
      logger,
    };
  }

  /** Registers handler(task, ctx) for the remote product named product. Register every handler before run(). */
  handle(product, handler) {
    if (typeof product !== 'string' || product === '') throw new TypeError('product must be a non-empty string');
    if (typeof handler !== 'function') throw new TypeError('handler must be a function (task, ctx) => Promise<{ result, costItems }>');
    this.#handlers.set(product, handler);
    return this;
  }

  /** Stops claiming; run() drains the tasks in flight and resolves. */
  stop() {
    this.#stop.abort();
  }

  #log(msg, fields) {
    this.#opts.logger?.warn?.(msg, fields);
  }

  /**
   * Claims and runs tasks until stop() (or, with handleSignals, SIGTERM or
   * SIGINT), then drains them and resolves. A claim that fails is never
   * resent: after a pause (from 0.5 s doubling to 30 s, with jitter) the worker
   * sends a new claim (the tasks of a claim whose answer was lost come back
   * when their lease passes). A completion or failure is retried as the
   * client's maxRetries says (those calls are idempotent), through any of its
   * base URLs. An error no retry mends (a key that is not a worker key, a
   * product it may not serve or the server does not run remotely) rejects,
   * after the drain.
   */
  async run({ handleSignals = true } = {}) {
    const handlers = new Map(this.#handlers);
    if (handlers.size === 0) throw new Error('the worker has no handler: call handle() first');
    const products = [...handlers.keys()];
    const stop = this.#stop.signal;
    const onSignal = () => this.stop();
    if (handleSignals) process.on('SIGTERM', onSignal).on('SIGINT', onSignal);
    const stopped = new Promise((resolve) => stop.addEventListener('abort', resolve, { once: true }));
    let failure = null;
    let pause = 500;
    try {
      while (!stop.aborted) {
        const free = this.#opts.concurrency - this.#running.size;
        if (free <= 0) {
          await Promise.race([new Promise((resolve) => (this.#wake = resolve)), stopped]);
          continue;
        }
        let page;
        try {
          page = await this.#client.tasks.claim({ products, max: free, waitSeconds: this.#opts.waitSeconds, worker: this.identity }, { signal: stop });
        } catch (e) {
          if (stop.aborted) break;
          if (e instanceof PermissionError || e instanceof InvalidRequestError || e instanceof AuthenticationError) {
            failure = e;
            break;
          }
          // Half the pause plus a random part of the other half: workers cut off together do not all come back at once.
          const wait = pause / 2 + (Math.random() * pause) / 2;
          this.#log('claiming tasks failed; claiming again after a pause', { error: e, pause: wait });
          await Promise.race([sleep(wait), stopped]);
          pause = Math.min(2 * pause, 30_000);
          continue;
        }
        pause = 500;
        for (const task of page.data ?? []) this.#start(handlers.get(task.product), task);
      }
      await this.#drain();
    } finally {
      if (handleSignals) process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
    }
    if (failure) throw failure;
  }

  async #drain() {
    const all = [...this.#running.values()].map((r) => r.done);
    let timer;
    await Promise.race([Promise.allSettled(all), new Promise((r) => (timer = setTimeout(r, this.#opts.drainTimeout)))]);
    clearTimeout(timer);
    for (const run of [...this.#running.values()]) {
      // Past the drain timeout: the handler is aborted and the task handed
      // back now; whatever the handler returns later is dropped.
      if (!run.ctrl.signal.aborted) run.ctrl.abort(new TaskStoppedError(WORKER_STOPPED));
      if (run.reported) continue;
      run.reported = true;
      await this.#report(run.task, () =>
        this.#client.tasks.fail(run.task.id, { message: 'the worker stopped before the task finished', retry: true }),
      );
    }
  }

  async #report(task, call) {
    try {
      await call();
    } catch (e) {
      this.#log("reporting the task's end failed", { task: task.id, error: e });
    }
  }

  // Heartbeats of one task run one after the other (timer and reportSpend).
  #beat(run, costItems) {
    const p = run.chain.then(async () => {
      if (run.ctrl.signal.aborted) throw run.ctrl.signal.reason;
      try {
        await this.#client.tasks.heartbeat(run.task.id, { costItems });
      } catch (e) {
        const reason = stopReason(e);
        if (!reason) throw e;
        const stopped = new TaskStoppedError(reason, { cause: e });
        run.ctrl.abort(stopped);
        throw stopped;
      }
    });
    run.chain = p.catch(() => {});
    return p;
  }

  #start(handler, task) {
    const ctrl = new AbortController();
    const run = { task, ctrl, reported: false, chain: Promise.resolve(), done: null };
    const ctx = {
      task,
      budget: task.budget ? task.budget.amount : null,
      signal: ctrl.signal,
      reportSpend: (...items) => this.#beat(run, items),
    };
    const timer = setInterval(() => {
      this.#beat(run, []).catch((e) => {
        if (!(e instanceof TaskStoppedError)) this.#log('heartbeat failed', { task: task.id, error: e });
      });
    }, this.#opts.heartbeatInterval);
    ctrl.signal.addEventListener('abort', () => clearInterval(timer), { once: true });
    this.#running.set(task.id, run);
    run.done = (async () => {
      let out;
      let error = null;
      try {
        out = await handler(task, ctx);
      } catch (e) {
        error = e ?? new Error('the handler threw ' + String(e));
      }
      clearInterval(timer);
      await run.chain; // no heartbeat in flight
      if (run.reported) return;
      run.reported = true;
      const reason = ctrl.signal.aborted ? ctrl.signal.reason?.reason : null;
      if (reason === LEASE_LOST || reason === MARGIN_FLOOR_EXCEEDED) return; // the server stopped it
      const tasks = this.#client.tasks;
      if (error) {
        const retry = !(error instanceof Permanent) || reason === WORKER_STOPPED;
        await this.#report(task, () => tasks.fail(task.id, { message: failMessage(error), retry }));
        return;
      }
      const extra = out && typeof out === 'object' ? Object.keys(out).filter((k) => k !== 'result' && k !== 'costItems') : [];
      if (extra.length) {
        // { queue: 'billing' } instead of { result: { queue: 'billing' } }: refused rather than completed with {}.
        const message = `the handler resolved to an object with ${JSON.stringify(extra[0])}: it must resolve to { result, costItems }`;
        await this.#report(task, () => tasks.fail(task.id, { message, retry: false }));
        return;
      }
      try {
        await tasks.complete(task.id, { result: out?.result ?? {}, costItems: out?.costItems ?? [] });
      } catch (e) {
        if (e instanceof TypeError || (e instanceof InvalidRequestError && !(e instanceof NotFoundError))) {
          // The result was refused: the same run would give the same again.
          await this.#report(task, () => tasks.fail(task.id, { message: failMessage(new Error('the result was refused: ' + e.message)), retry: false }));
        } else {
          this.#log('completing the task failed', { task: task.id, error: e });
        }
      }
    })().finally(() => {
      this.#running.delete(task.id);
      const wake = this.#wake;
      this.#wake = null;
      wake?.();
    });
  }
}
