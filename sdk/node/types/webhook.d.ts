/** The header carrying the signature: `t=<unix>,v1=<hex>[,v1=<hex>...]`. */
export declare const SIGNATURE_HEADER: 'X-Service-Signature';
/** 5 minutes, in milliseconds. */
export declare const TOLERANCE_MS: number;

export type WebhookVerificationReason = 'no_signature' | 'bad_signature' | 'too_old';

/** A webhook request that does not verify (its own class, not a CauriError: no HTTP call failed). */
export declare class WebhookVerificationError extends Error {
  readonly name: 'WebhookVerificationError';
  readonly reason: WebhookVerificationReason;
}

/** The raw body exactly as received: never a parsed object. */
export type RawBody = string | Uint8Array | ArrayBuffer; // a Buffer is a Uint8Array
/** Node's req.headers, a fetch Headers, a Map, or any object: names in any case. */
export type HeadersLike =
  | Headers
  | Map<string, string | string[] | undefined>
  | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** The receiver's clock: a Date or milliseconds since the epoch. Default: now. */
  now?: Date | number;
  /** Default 5 minutes (300 000 ms). */
  toleranceMs?: number;
}

/**
 * Verifies a webhook request (constant-time compare, 5-minute tolerance, any
 * of several v1 signatures) and returns its event: the parsed JSON body, or
 * null for an empty body. Throws WebhookVerificationError.
 */
export declare function verifyWebhook<E = import('./index.js').WebhookEvent>(
  body: RawBody,
  headers: HeadersLike,
  secret: string,
  options?: VerifyOptions,
): E;

/** The hex v1 signature of body at timestamp (unix seconds) under secret, as the service computes it. */
export declare function webhookSignature(secret: string, timestamp: number | bigint, body: RawBody): string;

/** The first value of a header, its name in any case. */
export declare function headerValue(headers: HeadersLike, name: string): string | undefined;
