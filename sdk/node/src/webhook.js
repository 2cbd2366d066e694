// Verification of Cauri's webhook requests: the same scheme as the Go
// package webhook (webhook/webhook.go, Verify), checked against the shared
// vectors in sdk/testdata/webhook-vectors.json.
//
// X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=<hex>...]
// where each v1 is HMAC-SHA256, keyed with the workspace's secret key of the
// event's mode, of "<t>.<raw body>".

import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying the signature. */
export const SIGNATURE_HEADER = 'X-Service-Signature';
/** How far (milliseconds) a request's timestamp may be from the receiver's clock. */
export const TOLERANCE_MS = 5 * 60 * 1000;

/**
 * A webhook request that does not verify. `reason` is one of
 * `no_signature` (no usable X-Service-Signature: no t= or no v1= entry),
 * `bad_signature` (no v1 entry matches the body under the secret) or
 * `too_old` (the timestamp is more than 5 minutes from the clock).
 */
export class WebhookVerificationError extends Error {
  constructor(reason, message) {
    super(message);
    this.name = 'WebhookVerificationError';
    this.reason = reason;
  }
}

const INT64_MAX = 9223372036854775807n;
const INT64_MIN = -9223372036854775808n;

// parseInt64 mirrors Go's strconv.ParseInt(v, 10, 64): an optional sign,
// decimal digits, within int64; null otherwise.
function parseInt64(v) {
  if (!/^[+-]?[0-9]+$/.test(v)) return null;
  const n = BigInt(v);
  if (n > INT64_MAX || n < INT64_MIN) return null;
  return n;
}

// decodeHex mirrors Go's hex.DecodeString: even length, hex digits in any
// case (Buffer.from(..., 'hex') alone would stop silently at a bad digit).
function decodeHex(v) {
  if (v.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(v)) return null;
  return Buffer.from(v, 'hex');
}

/** The raw body as bytes. Refuses an already-parsed object: it cannot be verified. */
function bodyBytes(body) {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (body == null) return Buffer.alloc(0);
  throw new TypeError(
    'cauri: verifyWebhook needs the raw request body (string, Buffer or Uint8Array) exactly as received; ' +
      'a parsed (and re-serialised) JSON object does not verify. With Express, use express.raw({type: "application/json"}).',
  );
}

/** The first value of a header, whatever the container, its name in any case. */
export function headerValue(headers, name) {
  if (!headers) return undefined;
  const lower = name.toLowerCase();
  if (typeof headers.get === 'function' && !(headers instanceof Map)) {
    const v = headers.get(name); // fetch Headers: case-insensitive already
    return v == null ? undefined : String(v);
  }
  const entries = headers instanceof Map ? headers.entries() : Object.entries(headers);
  for (const [k, v] of entries) {
    if (String(k).toLowerCase() !== lower || v == null) continue;
    return Array.isArray(v) ? (v.length ? String(v[0]) : undefined) : String(v);
  }
  return undefined;
}

/** The hex v1 signature of body at timestamp (unix seconds) under secret. */
export function webhookSignature(secret, timestamp, body) {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8'));
  mac.update(`${BigInt(timestamp)}.`);
  mac.update(bodyBytes(body));
  return mac.digest('hex');
}

function nowMs(now) {
  if (now == null) return Date.now();
  if (now instanceof Date) return now.getTime();
  if (typeof now === 'number') return now;
  throw new TypeError('cauri: now must be a Date or milliseconds since the epoch');
}

/**
 * Verifies a webhook request and returns its event (the parsed JSON body;
 * null for an empty body).
 *
 * @param body    the raw body, exactly as received (string, Buffer, Uint8Array)
 * @param headers the request's headers: an object (Node's req.headers,
 *                names in any case), a fetch Headers, or a Map
 * @param secret  the workspace's secret key of the event's mode
 * @param options `now`: the clock (Date, or milliseconds since the epoch;
 *                default Date.now()); `toleranceMs` (default 5 minutes)
 * @throws WebhookVerificationError with reason no_signature, bad_signature or too_old
 */
export function verifyWebhook(body, headers, secret, options = {}) {
  if (typeof secret !== 'string' || secret === '') {
    throw new TypeError('cauri: verifyWebhook needs the secret key of the event\'s mode');
  }
  const raw = bodyBytes(body);
  const header = headerValue(headers, SIGNATURE_HEADER) ?? '';
  let ts = -1n;
  const sigs = [];
  for (const part of header.split(',')) {
    const p = part.trim();
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const k = p.slice(0, eq);
    const v = p.slice(eq + 1);
    if (k === 't') {
      const n = parseInt64(v);
      if (n !== null) ts = n;
    } else if (k === 'v1') {
      const b = decodeHex(v);
      if (b !== null) sigs.push(b);
    }
  }
  if (ts < 0n || sigs.length === 0) {
    throw new WebhookVerificationError('no_signature', `cauri: no valid ${SIGNATURE_HEADER} header`);
  }
  const want = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${ts}.`).update(raw).digest();
  let matched = false;
  for (const s of sigs) {
    // The length of a signature is no secret; timingSafeEqual needs equal lengths.
    if (s.length === want.length && timingSafeEqual(s, want)) matched = true;
  }
  if (!matched) {
    throw new WebhookVerificationError('bad_signature', 'cauri: webhook signature does not match the body');
  }
  const tolerance = options.toleranceMs ?? TOLERANCE_MS;
  const d = nowMs(options.now) - Number(ts) * 1000;
  if (d > tolerance || d < -tolerance) {
    throw new WebhookVerificationError('too_old', 'cauri: webhook timestamp is more than 5 minutes from now');
  }
  if (raw.length === 0) return null;
  return JSON.parse(raw.toString('utf8'));
}
