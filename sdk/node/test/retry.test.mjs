// The library's own retry logic, against a tiny fake server on 127.0.0.1
// that answers what each test scripts (everything about the API itself is
// tested against the real service in service.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Cauri, CauriError, CauriConnectionError } from '../src/index.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
let server;
let base;
let script = []; // answers to give, in order: {status, headers, body}
let seen = []; // requests received: {method, url, headers, body, at}

before(async () => {
  server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
      const a = script.shift() ?? { status: 200, body: { ok: true } };
      if (a.destroy) return req.socket.destroy();
      res.writeHead(a.status, { 'Content-Type': 'application/json', 'X-Request-Id': 'req_fake', ...(a.headers || {}) });
      res.end(JSON.stringify(a.body ?? {}));
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(() => server.close());

function reset(answers) {
  script = answers;
  seen = [];
}
const client = (o = {}) => new Cauri('svc_test_sec_fake', { baseURL: base, retryBaseDelay: 20, ...o });

test('503 then 200: a transfer is retried with the same generated Idempotency-Key', async () => {
  reset([{ status: 503, body: { error: 'down' } }, { status: 503, body: { error: 'down' } }, { status: 201, body: { id: 'tr_1' } }]);
  const tr = await client().transfers.create({ amount: 100, currency: 'XOF', phone: '+2250707123456', country: 'CI' });
  assert.equal(tr.id, 'tr_1');
  assert.equal(seen.length, 3);
  const keys = seen.map((r) => r.headers['idempotency-key']);
  assert.match(keys[0], UUID_V4);
  assert.deepEqual(keys, [keys[0], keys[0], keys[0]]);
  assert.equal(tr.lastResponse.attempts, 3);
  assert.equal(tr.lastResponse.idempotencyKey, keys[0]);
  assert.equal(seen[0].headers.authorization, 'Bearer svc_test_sec_fake');
});

test('each call gets its own generated key; a caller key is sent as given', async () => {
  reset([]);
  const c = client();
  await c.refunds.create({ transaction_id: 'cs_1' });
  await c.refunds.create({ transaction_id: 'cs_1' });
  await c.refunds.create({ transaction_id: 'cs_1' }, { idempotencyKey: 'refund-cs_1' });
  await c.transfers.batch([{ amount: 1 }]);
  const keys = seen.map((r) => r.headers['idempotency-key']);
  assert.match(keys[0], UUID_V4);
  assert.match(keys[1], UUID_V4);
  assert.notEqual(keys[0], keys[1]);
  assert.equal(keys[2], 'refund-cs_1');
  assert.match(keys[3], UUID_V4);
  assert.deepEqual(JSON.parse(seen[3].body), { transfers: [{ amount: 1 }] });
});

test('retries stop at maxRetries, and the error carries the last answer', async () => {
  reset([{ status: 500, body: { error: 'boom' } }, { status: 502, body: { error: 'bad' } }, { status: 500, body: { error: 'again' } }]);
  await assert.rejects(client({ maxRetries: 1 }).transfers.get('tr_1'), (e) => {
    assert.ok(e instanceof CauriError);
    assert.equal(e.status, 502);
    assert.equal(e.message, 'cauri: 502: bad');
    assert.equal(e.requestId, 'req_fake');
    return true;
  });
  assert.equal(seen.length, 2);
});

test('a POST without an Idempotency-Key is never retried', async () => {
  reset([{ status: 503, body: { error: 'down' } }]);
  await assert.rejects(client().sessions.create({ amount: 100 }), { status: 503 });
  reset([{ status: 429, headers: { 'Retry-After': '1' }, body: { error: 'slow down' } }]);
  await assert.rejects(client().webhookDeliveries.resend('whd_1'), { status: 429, retryAfter: 1 });
  reset([{ status: 503, body: { error: 'down' } }]);
  await assert.rejects(client().sandbox.settle('cs_1'), { status: 503 });
  assert.equal(seen.length, 1);
  // A session with the caller's key is retried.
  reset([{ status: 503, body: { error: 'down' } }, { status: 201, body: { id: 'cs_2' } }]);
  const s = await client().sessions.create({ amount: 100 }, { idempotencyKey: 'order-1' });
  assert.equal(s.id, 'cs_2');
  assert.deepEqual(seen.map((r) => r.headers['idempotency-key']), ['order-1', 'order-1']);
});

test('429 with Retry-After: 1 waits at least a second, then succeeds', async () => {
  reset([{ status: 429, headers: { 'Retry-After': '1' }, body: { error: 'Too many requests', code: 'rate_limited' } }, { status: 200, body: { data: [] } }]);
  const t0 = Date.now();
  const list = await client({ retryBaseDelay: 1 }).refunds.list({ limit: 5 });
  assert.deepEqual(list.data, []);
  assert.equal(seen.length, 2);
  const gap = seen[1].at - seen[0].at;
  assert.ok(gap >= 1000 && gap < 2000, `waited ${gap} ms`);
  assert.ok(Date.now() - t0 >= 1000);
  assert.equal(seen[0].url, '/v1/refunds?limit=5');
});

test('a Retry-After beyond maxRetryWait is not waited for', async () => {
  reset([{ status: 429, headers: { 'Retry-After': '120' }, body: { error: 'later', code: 'rate_limited' } }]);
  const t0 = Date.now();
  await assert.rejects(client({ maxRetryWait: 5000 }).transfers.list(), { status: 429, code: 'rate_limited', retryAfter: 120 });
  assert.ok(Date.now() - t0 < 500);
  assert.equal(seen.length, 1);
});

test('the daily cap (429 plafond_journalier) is not retried', async () => {
  reset([{ status: 429, body: { error: 'cap', code: 'plafond_journalier' } }]);
  await assert.rejects(client().transfers.create({ amount: 1 }), { status: 429, code: 'plafond_journalier' });
  assert.equal(seen.length, 1);
});

test('PATCH (setting a state) is retried; 4xx is not', async () => {
  reset([{ status: 500, body: { error: 'x' } }, { status: 200, body: { success: true } }]);
  assert.equal((await client().webhookConfig.update({ webhookUrl: '' })).success, true);
  assert.equal(seen.length, 2);
  reset([{ status: 400, body: { error: 'amount is required' } }]);
  await assert.rejects(client().refunds.create({}), { status: 400, message: 'cauri: 400: amount is required' });
  assert.equal(seen.length, 1);
});

test('network errors are CauriConnectionError (status 0), retried for GETs', async () => {
  reset([{ destroy: true }, { status: 200, body: { id: 'whd_1' } }]);
  assert.equal((await client().webhookDeliveries.get('whd_1')).id, 'whd_1');
  assert.equal(seen.length, 2);
  const dead = new Cauri('k', { baseURL: 'http://127.0.0.1:1', maxRetries: 1, retryBaseDelay: 1 });
  await assert.rejects(dead.sessions.status('cs_1'), (e) => e instanceof CauriConnectionError && e.status === 0 && e.code === 'network_error');
});

test('a timeout is a CauriConnectionError with code timeout', async () => {
  const slow = http.createServer((req, res) => setTimeout(() => res.end('{}'), 1000));
  await new Promise((r) => slow.listen(0, '127.0.0.1', r));
  try {
    const c = new Cauri('k', { baseURL: `http://127.0.0.1:${slow.address().port}`, timeout: 100, maxRetries: 0 });
    await assert.rejects(c.sessions.status('cs_1'), { name: 'CauriConnectionError', code: 'timeout', status: 0 });
  } finally {
    slow.closeAllConnections();
    slow.close();
  }
});

test('the /checkout error shape and amounts as strings of digits', async () => {
  reset([{ status: 409, body: { success: false, message: 'already paid' } }]);
  await assert.rejects(client().sandbox.settle('cs_1', 'succes'), { status: 409, code: null, message: 'cauri: 409: already paid' });
  reset([{ status: 201, body: { id: 'cs_1' } }]);
  await client().sessions.create({ amount: '15000.50', currency: 'GHS', metadata: { amount: '12' } });
  assert.equal(seen[0].body, '{"amount":15000.50,"currency":"GHS","metadata":{"amount":"12"}}');
  reset([{ status: 200, body: { results: [] } }]);
  await client().transfers.batch([{ amount: '2500' }, { amount: 10n }, { amount: 7 }]);
  assert.equal(seen[0].body, '{"transfers":[{"amount":2500},{"amount":10},{"amount":7}]}');
});

test('query parameters keep their wire names and skip undefined', async () => {
  reset([]);
  await client().webhookDeliveries.list({ transaction_id: 'cs_1', event: 'payment.completed', status: undefined, limit: 10 });
  await client().paymentLinks.qr('pl_1', { format: 'png' });
  assert.equal(seen[0].url, '/v1/webhooks/deliveries?transaction_id=cs_1&event=payment.completed&limit=10');
  assert.equal(seen[1].url, '/v1/payment-links/pl_1/qr?format=png');
});

test('the export as text and as a stream', async () => {
  reset([{ status: 200, body: 'ID,Order ID' }, { status: 200, body: 'ID,Order ID' }]);
  assert.equal(await client().transactions.export({ status: 'SUCCESS', from: '2026-11-01' }), '"ID,Order ID"');
  const stream = await client().transactions.exportStream({ format: 'csv' });
  let text = '';
  for await (const chunk of stream) text += Buffer.from(chunk).toString();
  assert.equal(text, '"ID,Order ID"');
  assert.deepEqual(seen.map((r) => r.url), ['/v1/transactions/export?status=SUCCESS&from=2026-11-01', '/v1/transactions/export?format=csv']);
});

test('the key is not enumerable (not printed by console.log)', () => {
  const c = client();
  assert.ok(!JSON.stringify(Object.keys(c)).includes('key'));
  assert.ok(!require_inspect(c).includes('svc_test_sec_fake'));
});

import { inspect } from 'node:util';
function require_inspect(v) {
  return inspect(v, { depth: 0 });
}
