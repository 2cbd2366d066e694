// Starts the real service for the tests: $CAURI_BIN (the Go test's build)
// or a binary built here from the repository, `cauri serve` on a free
// 127.0.0.1 port with its own SQLite file, and a workspace made with the CLI.
import { spawn, execFile } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import net from 'node:net';
import http from 'node:http';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../../../', import.meta.url));

let built;
export async function cauriBinary() {
  if (process.env.CAURI_BIN) return process.env.CAURI_BIN;
  if (!built) {
    built = (async () => {
      const dir = mkdtempSync(join(tmpdir(), 'cauri-node-bin-'));
      const bin = join(dir, 'cauri');
      await run('go', ['build', '-o', bin, './cmd/cauri'], { cwd: REPO, timeout: 600_000 });
      return bin;
    })();
  }
  return built;
}

export async function freePort() {
  const s = net.createServer();
  await new Promise((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address();
  await new Promise((r) => s.close(r));
  return port;
}

export async function waitFor(what, fn, timeoutMs = 15_000, everyMs = 50) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

function get(url) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    req.setTimeout(1000, () => req.destroy());
  });
}

/** A running service with one workspace: { baseURL, keys, workspace, stop() }. */
export async function startService(name = 'Boutique Node') {
  const bin = await cauriBinary();
  const dir = mkdtempSync(join(tmpdir(), 'cauri-node-'));
  const db = join(dir, 'cauri.db');
  const port = await freePort();
  const baseURL = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    CAURI_ADDR: `127.0.0.1:${port}`,
    CAURI_BASE_URL: baseURL,
    CAURI_DATABASE_URL: db,
    CAURI_WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    CAURI_LOG_LEVEL: 'warn',
  };
  const log = openSync(join(dir, 'serve.log'), 'a');
  const child = spawn(bin, ['serve'], { env, stdio: ['ignore', log, log] });
  let exited = false;
  child.on('exit', () => (exited = true));
  const kill = () => {
    if (!exited) child.kill('SIGKILL'); // only the process started here, by its pid
  };
  process.on('exit', kill);
  const stop = async () => {
    if (!exited) {
      child.kill('SIGTERM');
      await waitFor('cauri serve to stop', () => exited, 5000).catch(kill);
    }
    process.off('exit', kill);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor('GET /healthz = 200', async () => !exited && (await get(`${baseURL}/healthz`)) === 200, 20_000, 100);
    const { stdout } = await run(bin, ['workspace', 'create', '--name', name], { env, timeout: 30_000 });
    const workspace = JSON.parse(stdout);
    return { baseURL, keys: workspace.keys, workspace, stop, bin, env, dir };
  } catch (e) {
    await stop();
    if (existsSync(dir)) rmSync(dir, { recursive: true, force: true });
    throw e;
  }
}

/** A local webhook receiver: every request's raw body and headers as received. */
export async function startReceiver(answer = 200) {
  const received = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(answer);
      res.end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/hooks/cauri`;
  return {
    url,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}
