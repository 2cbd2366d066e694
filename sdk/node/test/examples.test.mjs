// The examples, run as a merchant runs them, against the real service.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Cauri } from '../src/index.js';
import { startService, freePort, waitFor } from './helpers/service.mjs';

let svc;
let cauri;
const children = [];

before(async () => {
  svc = await startService('Boutique Exemples');
  cauri = new Cauri(svc.keys.test_secret, { baseURL: svc.baseURL });
});
after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM'); // the examples started here, by pid
  await svc?.stop();
});

async function runExample(file) {
  const port = await freePort();
  const child = spawn(process.execPath, [fileURLToPath(new URL(`../examples/${file}`, import.meta.url))], {
    env: { ...process.env, CAURI_SECRET_KEY: svc.keys.test_secret, CAURI_BASE_URL: svc.baseURL, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const out = { text: '' };
  child.stdout.on('data', (d) => (out.text += d));
  child.stderr.on('data', (d) => (out.text += d));
  await waitFor(`${file} to listen`, () => out.text.includes('listening') || out.text.includes('endpoint on') || child.exitCode !== null, 10_000);
  assert.equal(child.exitCode, null, out.text);
  return { base: `http://127.0.0.1:${port}`, out, child };
}

test('examples/shop.mjs: buy, redirect, pay in the sandbox, order fulfilled on the webhook', async () => {
  const shop = await runExample('shop.mjs');
  await cauri.webhookConfig.update({ webhookUrl: `${shop.base}/webhooks/cauri` });
  const res = await fetch(`${shop.base}/buy`, { method: 'POST', redirect: 'manual' });
  assert.equal(res.status, 303);
  const location = res.headers.get('location');
  const id = location.split('/').pop();
  assert.equal(location, `${svc.baseURL}/pay/${id}`);
  assert.equal((await (await fetch(`${shop.base}/orders/1042`)).json()).status, 'pending');
  await cauri.sandbox.settle(id, 'succes');
  const order = await waitFor('the order to be paid', async () => {
    const o = await (await fetch(`${shop.base}/orders/1042`)).json();
    return o.status === 'paid' && o;
  }, 20_000, 100);
  assert.equal(order.session, id);
  assert.match(shop.out.text, /order 1042 paid/);
  // A forged webhook is refused.
  const forged = await fetch(`${shop.base}/webhooks/cauri`, { method: 'POST', body: '{"event":"payment.completed"}', headers: { 'X-Service-Signature': 't=1,v1=00' } });
  assert.equal(forged.status, 400);
  assert.equal(await forged.text(), 'bad_signature');
  shop.child.kill('SIGTERM');
});

test('examples/express-webhook.mjs: the Express-shaped handler verifies a real webhook', async () => {
  const ep = await runExample('express-webhook.mjs');
  await cauri.webhookConfig.update({ webhookUrl: `${ep.base}/webhooks/cauri` });
  const s = await cauri.sessions.create({ amount: 2500, currency: 'XOF', metadata: { order_id: 'exp-1' } });
  await cauri.sandbox.settle(s.id, 'succes');
  await waitFor('the endpoint to log the payment', () => ep.out.text.includes(`payment.completed ${s.id} order exp-1`), 20_000, 100);
  const unsigned = await fetch(`${ep.base}/webhooks/cauri`, { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } });
  assert.equal(unsigned.status, 400);
  assert.equal(await unsigned.text(), 'no_signature');
  await waitFor('the delivery to be logged delivered', async () => {
    const deliveries = await cauri.webhookDeliveries.list({ transaction_id: s.id, event: 'payment.completed' });
    return deliveries.data.length === 1 && deliveries.data[0].status === 'delivered';
  }, 10_000, 100);
  ep.child.kill('SIGTERM');
});
