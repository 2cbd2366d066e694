// The Node.js client of the Cauri API. Plain ESM, no dependencies: Node's
// fetch and crypto. Types: types/index.d.ts (over types/schema.d.ts,
// generated from openapi.yaml).

import { randomUUID } from 'node:crypto';
import { verifyWebhook, WebhookVerificationError, webhookSignature, headerValue } from './webhook.js';

export { verifyWebhook, WebhookVerificationError, webhookSignature };

export const VERSION = '0.1.0';
export const DEFAULT_BASE_URL = 'http://localhost:8080';

/**
 * Every route of openapi.yaml this library calls, as "METHOD /path" with the
 * document's path templates. The coverage test holds it to the running
 * service's /v1/openapi.json.
 */
export const ROUTES = Object.freeze([
  'POST /v1/checkout/sessions',
  'GET /v1/checkout/sessions/{id}/status',
  'GET /v1/checkout/sessions/{id}/methods',
  'GET /v1/config/webhook',
  'PATCH /v1/config/webhook',
  'POST /v1/payment-links',
  'GET /v1/payment-links',
  'GET /v1/payment-links/{id}',
  'PATCH /v1/payment-links/{id}',
  'GET /v1/payment-links/{id}/qr',
  'GET /v1/payment-links/{id}/check',
  'GET /v1/transactions/export',
  'POST /v1/route',
  'GET /v1/route',
  'POST /v1/transfers',
  'GET /v1/transfers',
  'POST /v1/transfers/batch',
  'POST /v1/transfers/recipient',
  'GET /v1/transfers/{id}',
  'POST /v1/refunds',
  'GET /v1/refunds',
  'GET /v1/refunds/{id}',
  'GET /v1/webhooks/deliveries',
  'GET /v1/webhooks/deliveries/{id}',
  'POST /v1/webhooks/deliveries/{id}/resend',
  'POST /checkout/sandbox',
]);

/**
 * An answer of the service other than 2xx, or no answer at all (status 0).
 * `code` is the API's machine-readable `code` when the route sends one
 * (transfers, refunds, links' test_mode, rate limits, ...), else null.
 */
export class CauriError extends Error {
  constructor(message, fields = {}) {
    super(message);
    this.name = 'CauriError';
    this.status = fields.status ?? 0;
    this.code = fields.code ?? null;
    this.param = fields.param ?? null;
    this.requestId = fields.requestId ?? null;
    this.retryAfter = fields.retryAfter ?? null;
    this.idempotencyKey = fields.idempotencyKey ?? null;
    this.method = fields.method ?? null;
    this.path = fields.path ?? null;
    this.body = fields.body ?? null; // the raw body text
    this.json = fields.json ?? null; // the body parsed, when JSON
  }
}

/** No answer: the connection failed (code `network_error`) or timed out (`timeout`). status is 0. */
export class CauriConnectionError extends CauriError {
  constructor(message, fields = {}) {
    super(message, { ...fields, status: 0 });
    this.name = 'CauriConnectionError';
  }
}

/** A new idempotency key: a UUID v4 from the CSPRNG (crypto.randomUUID). */
export function newIdempotencyKey() {
  return randomUUID();
}

// Money goes out as JSON numbers, never through a float the caller did not
// give: an `amount` (of the body, or of a batch's transfers) given as a
// string of digits ("15000", "15.50") or a bigint is written into the JSON as
// that number, verbatim. Other strings (metadata values) stay strings.
const DECIMAL = /^[0-9]+(\.[0-9]+)?$/;
const MARK = '\u0000cauri-number:';
function markAmount(obj) {
  if (!obj || typeof obj !== 'object' || Array.isArray(obj) || !('amount' in obj)) return obj;
  const a = obj.amount;
  if (typeof a === 'bigint') return { ...obj, amount: MARK + a.toString() };
  if (typeof a === 'string' && DECIMAL.test(a)) return { ...obj, amount: MARK + a };
  return obj;
}
function encodeJSON(value) {
  let v = markAmount(value);
  if (v && Array.isArray(v.transfers)) v = { ...v, transfers: v.transfers.map(markAmount) };
  const text = JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? MARK + x.toString() : x));
  return text.replace(/"\\u0000cauri-number:(-?[0-9.]+)"/g, '$1');
}

function parseRetryAfter(v) {
  if (v == null || v === '') return null;
  if (/^\s*[0-9]+\s*$/.test(v)) return Number(v);
  const t = Date.parse(v);
  if (Number.isNaN(t)) return null;
  return Math.max(0, Math.ceil((t - Date.now()) / 1000));
}

function errorFromResponse(res, text, ctx) {
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  let message = null;
  let code = null;
  let param = null;
  if (json && typeof json === 'object') {
    if (typeof json.error === 'string') {
      // /v1: {"error": "...", "code"?: "..."}
      message = json.error;
      code = typeof json.code === 'string' ? json.code : null;
    } else if (json.error && typeof json.error === 'object') {
      message = json.error.message ?? null;
      code = json.error.code ?? null;
      param = json.error.param ?? null;
    } else if (json.success === false && typeof json.message === 'string') {
      // /checkout/*: {"success": false, "message": "..."}
      message = json.message;
    }
    if (param == null && typeof json.param === 'string') param = json.param;
  }
  if (message == null) message = text ? text.slice(0, 500) : res.statusText || `HTTP ${res.status}`;
  // Routes whose errors carry no code (sessions, deliveries, ...) get the code
  // the API gives the same refusal elsewhere, so callers can branch on code
  // alone: 401 `unauthorized`, 429 `rate_limited`. json holds what was sent.
  if (code == null && res.status === 401) code = 'unauthorized';
  if (code == null && res.status === 429) code = 'rate_limited';
  const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
  return new CauriError(`cauri: ${res.status}${code ? ' ' + code : ''}: ${message}`, {
    status: res.status,
    code,
    param,
    requestId: res.headers.get('x-request-id'),
    retryAfter,
    idempotencyKey: ctx.idempotencyKey,
    method: ctx.method,
    path: ctx.path,
    body: text,
    json,
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function withMeta(value, meta) {
  if (value && typeof value === 'object') {
    Object.defineProperty(value, 'lastResponse', { value: meta, enumerable: false, configurable: true });
  }
  return value;
}

export class Cauri {
  /**
   * @param {string} key the workspace key (svc_test_sec_..., svc_live_sec_...; a public key for the calls it allows)
   * @param {object} [options] baseURL, timeout (ms per attempt, default 30 000), maxRetries (default 2),
   *   maxRetryWait (ms, the longest Retry-After waited for, default 60 000), retryBaseDelay (ms, default 500),
   *   fetch (a fetch implementation, default globalThis.fetch)
   */
  constructor(key, options = {}) {
    if (typeof key !== 'string' || key === '') throw new TypeError('cauri: a key is required');
    Object.defineProperty(this, 'key', { value: key, enumerable: false }); // kept out of logs and console.log
    this.baseURL = (options.baseURL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.timeout = options.timeout ?? 30_000;
    this.maxRetries = options.maxRetries ?? 2;
    this.maxRetryWait = options.maxRetryWait ?? 60_000;
    this.retryBaseDelay = options.retryBaseDelay ?? 500;
    this.retryMaxDelay = options.retryMaxDelay ?? 8_000;
    this.fetch = options.fetch ?? globalThis.fetch;

    const c = this;
    const enc = encodeURIComponent;
    // Per-call options a route takes; an Idempotency-Key only where the route declares one.
    const o = (x) => (x ? { timeout: x.timeout, maxRetries: x.maxRetries, signal: x.signal } : {});
    this.sessions = {
      create: (params, opts = {}) =>
        c.request('POST', '/v1/checkout/sessions', { body: params, ...o(opts), idempotencyKey: opts.idempotencyKey }),
      status: (id, opts) => c.request('GET', `/v1/checkout/sessions/${enc(id)}/status`, opts),
      methods: (id, query = {}, opts) => c.request('GET', `/v1/checkout/sessions/${enc(id)}/methods`, { query, ...o(opts) }),
    };
    this.sandbox = {
      /** Settles a test session as the hosted page's buttons do: issue "succes" (paid) or "echec" (failed). */
      settle: (transactionId, issue = 'succes', opts) =>
        c.request('POST', '/checkout/sandbox', { body: { transactionId, issue }, auth: false, ...o(opts) }),
    };
    this.webhookConfig = {
      get: (opts) => c.request('GET', '/v1/config/webhook', opts),
      update: (params, opts) => c.request('PATCH', '/v1/config/webhook', { body: params, ...o(opts) }),
    };
    this.paymentLinks = {
      create: (params, opts) => c.request('POST', '/v1/payment-links', { body: params, ...o(opts) }),
      list: (query = {}, opts) => c.request('GET', '/v1/payment-links', { query, ...o(opts) }),
      get: (id, opts) => c.request('GET', `/v1/payment-links/${enc(id)}`, opts),
      update: (id, params, opts) => c.request('PATCH', `/v1/payment-links/${enc(id)}`, { body: params, ...o(opts) }),
      /** The QR code of the link's page: SVG (default) or PNG bytes, as a Uint8Array. */
      qr: (id, query = {}, opts) =>
        c.request('GET', `/v1/payment-links/${enc(id)}/qr`, { query, responseType: 'bytes', ...o(opts) }),
      check: (id, opts) => c.request('GET', `/v1/payment-links/${enc(id)}/check`, opts),
    };
    this.transactions = {
      /**
       * The transactions export: CSV text (format csv, the default) or the
       * parsed JSON (format json). The service answers it to the dashboard's
       * session cookie only: an API key gets 401 (see README).
       */
      export: (query = {}, opts) =>
        c.request('GET', '/v1/transactions/export', {
          query,
          responseType: query.format === 'json' ? 'json' : 'text',
          ...o(opts),
        }),
    };
    /** The CSV export as a web ReadableStream of bytes (the body as it streams in; up to 10 000 rows). */
    this.transactions.exportStream = (query = {}, opts) =>
      c.request('GET', '/v1/transactions/export', { query, responseType: 'stream', ...o(opts) });
    this.routing = {
      /** POST /v1/route: the best provider for a payment, with ranked fallbacks (secret key). */
      recommend: (params, opts) => c.request('POST', '/v1/route', { body: params, ...o(opts) }),
      /** GET /v1/route: a country's methods and providers ranked by reliability (no key needed). */
      overview: (query, opts) => c.request('GET', '/v1/route', { query, ...o(opts) }),
    };
    this.transfers = {
      create: (params, opts = {}) =>
        c.request('POST', '/v1/transfers', { body: params, ...o(opts), idempotencyKey: opts.idempotencyKey ?? newIdempotencyKey() }),
      list: (query = {}, opts) => c.request('GET', '/v1/transfers', { query, ...o(opts) }),
      /** Where the workspace can send money: GET /v1/transfers?options=1. */
      options: (opts) => c.request('GET', '/v1/transfers', { query: { options: '1' }, ...o(opts) }),
      /** Up to 500 transfers; the batch's Idempotency-Key is generated when none is given. */
      batch: (transfers, opts = {}) =>
        c.request('POST', '/v1/transfers/batch', {
          body: Array.isArray(transfers) ? { transfers } : transfers,
          ...o(opts),
          idempotencyKey: opts.idempotencyKey ?? newIdempotencyKey(),
        }),
      recipient: (params, opts) => c.request('POST', '/v1/transfers/recipient', { body: params, ...o(opts) }),
      get: (id, opts) => c.request('GET', `/v1/transfers/${enc(id)}`, opts),
    };
    this.refunds = {
      create: (params, opts = {}) =>
        c.request('POST', '/v1/refunds', { body: params, ...o(opts), idempotencyKey: opts.idempotencyKey ?? newIdempotencyKey() }),
      list: (query = {}, opts) => c.request('GET', '/v1/refunds', { query, ...o(opts) }),
      get: (id, opts) => c.request('GET', `/v1/refunds/${enc(id)}`, opts),
    };
    this.webhookDeliveries = {
      list: (query = {}, opts) => c.request('GET', '/v1/webhooks/deliveries', { query, ...o(opts) }),
      get: (id, opts) => c.request('GET', `/v1/webhooks/deliveries/${enc(id)}`, opts),
      resend: (id, opts) => c.request('POST', `/v1/webhooks/deliveries/${enc(id)}/resend`, opts),
    };
  }

  /**
   * Verifies a webhook request with this client's key as the secret (the
   * client must hold the secret key of the events' mode). See verifyWebhook.
   */
  verifyWebhook(body, headers, options) {
    return verifyWebhook(body, headers, this.key, options);
  }

  /** Whether a call may be sent again: never a POST without an Idempotency-Key. */
  static retriable(method, idempotencyKey) {
    return method !== 'POST' || Boolean(idempotencyKey);
  }

  /**
   * One call, with its retries. Options: query, body, idempotencyKey,
   * auth (default true), responseType (json, text, bytes, stream), timeout, maxRetries, signal.
   */
  async request(method, path, options = {}) {
    const { query, body, idempotencyKey, auth = true, responseType = 'json', signal } = options;
    const timeout = options.timeout ?? this.timeout;
    const maxRetries = options.maxRetries ?? this.maxRetries;
    let url = this.baseURL + path;
    if (query) {
      const qs = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) {
        if (v === undefined || v === null) continue;
        qs.append(k, String(v));
      }
      const s = qs.toString();
      if (s) url += '?' + s;
    }
    const headers = { 'User-Agent': `cauri-node/${VERSION}`, Accept: responseType === 'json' ? 'application/json' : '*/*' };
    if (auth) headers.Authorization = `Bearer ${this.key}`;
    if (idempotencyKey) headers['Idempotency-Key'] = String(idempotencyKey);
    let payload;
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      payload = encodeJSON(body);
    }
    const ctx = { method, path, idempotencyKey: idempotencyKey ? String(idempotencyKey) : null };
    const mayRetry = Cauri.retriable(method, idempotencyKey);

    for (let attempt = 0; ; attempt++) {
      let err;
      let res;
      let text;
      let bytes;
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(new Error('timeout')), timeout);
      const onAbort = () => ac.abort(signal.reason);
      if (signal) {
        if (signal.aborted) ac.abort(signal.reason);
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      try {
        res = await this.fetch(url, { method, headers, body: payload, signal: ac.signal, redirect: 'manual' });
        if (responseType === 'stream' && res.ok) {
          clearTimeout(timer); // the caller reads the body at its pace
          return res.body;
        }
        if (responseType === 'bytes' && res.ok) bytes = new Uint8Array(await res.arrayBuffer());
        else text = await res.text();
      } catch (e) {
        if (signal?.aborted) throw e; // the caller gave up: no retry
        const timedOut = ac.signal.aborted;
        err = new CauriConnectionError(
          timedOut ? `cauri: no answer within ${timeout} ms` : `cauri: ${e?.cause?.message || e?.message || e}`,
          { code: timedOut ? 'timeout' : 'network_error', ...ctx },
        );
        err.cause = e;
      } finally {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }

      if (!err) {
        const meta = {
          status: res.status,
          requestId: res.headers.get('x-request-id'),
          idempotencyKey: ctx.idempotencyKey,
          replayed: res.headers.get('idempotent-replayed') === 'true',
          attempts: attempt + 1,
          headers: res.headers,
        };
        if (res.ok) {
          if (responseType === 'bytes') return bytes;
          if (responseType === 'text') return text;
          return withMeta(text ? JSON.parse(text) : null, meta);
        }
        err = errorFromResponse(res, text, ctx);
      }

      // Retry: network errors, 429 (not the daily cap), 5xx, and a transfer
      // key still in use (409 idempotency_key_in_use); never a POST without a key.
      const retryableAnswer =
        err.status === 0 ||
        (err.status === 429 && err.code !== 'plafond_journalier') ||
        err.status >= 500 ||
        (err.status === 409 && err.code === 'idempotency_key_in_use');
      if (!mayRetry || !retryableAnswer || attempt >= maxRetries) throw err;
      let wait;
      if (err.retryAfter != null) {
        wait = err.retryAfter * 1000;
        if (wait > this.maxRetryWait) throw err; // waiting less would fail again: the caller decides
        wait += Math.floor(Math.random() * 100);
      } else {
        const base = Math.min(this.retryMaxDelay, this.retryBaseDelay * 2 ** attempt);
        wait = base / 2 + Math.random() * (base / 2); // exponential backoff, jittered
      }
      await sleep(wait);
    }
  }
}

export default Cauri;
export { headerValue };
