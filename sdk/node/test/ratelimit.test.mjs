// 429 from the real service, on an instance of its own so the limit it
// fills (60 session creations a minute per IP) disturbs no other test.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cauri, CauriError } from '../src/index.js';
import { startService } from './helpers/service.mjs';

let svc;
before(async () => {
  svc = await startService('Boutique Limite');
});
after(async () => svc?.stop());

test('the 61st session of the minute is 429 rate_limited with Retry-After', async () => {
  const cauri = new Cauri(svc.keys.test_secret, { baseURL: svc.baseURL, maxRetries: 0 });
  for (let i = 1; i <= 60; i++) {
    const s = await cauri.sessions.create({ amount: 100 + i, currency: 'XOF' });
    assert.match(s.id, /^cs_/);
  }
  const t0 = Date.now();
  await assert.rejects(cauri.sessions.create({ amount: 161, currency: 'XOF' }, { idempotencyKey: 'order-61' }), (e) => {
    assert.ok(e instanceof CauriError);
    assert.equal(e.status, 429);
    assert.equal(e.code, 'rate_limited');
    assert.ok(Number.isInteger(e.retryAfter) && e.retryAfter >= 1 && e.retryAfter <= 60, `Retry-After ${e.retryAfter}`);
    assert.match(e.message, /Too many requests/);
    return true;
  });
  assert.ok(Date.now() - t0 < 1000, 'maxRetries 0: no wait');
  // With retries allowed but a Retry-After beyond maxRetryWait, the error comes at once too.
  const patient = new Cauri(svc.keys.test_secret, { baseURL: svc.baseURL, maxRetries: 2, maxRetryWait: 500 });
  await assert.rejects(patient.sessions.create({ amount: 162 }, { idempotencyKey: 'order-62' }), { status: 429, code: 'rate_limited' });
});
