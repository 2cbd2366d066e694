// The public types of @cauri/node, over the models generated from
// openapi.yaml (./schema.d.ts, by openapi-typescript; never edited by hand).
import type { components, operations } from './schema.js';
import type { RawBody, HeadersLike, VerifyOptions } from './webhook.js';

export type { components, operations, paths } from './schema.js';
export {
  verifyWebhook,
  webhookSignature,
  headerValue,
  WebhookVerificationError,
  WebhookVerificationReason,
  RawBody,
  HeadersLike,
  VerifyOptions,
} from './webhook.js';

export type Schemas = components['schemas'];

/** An amount: a JSON number in major units. A string of digits ("15000", "15.50") or a bigint is sent as that number verbatim. */
export type Money = number | bigint | `${number}`;
type AmountIn<T> = T extends { amount: unknown }
  ? Omit<T, 'amount'> & { amount: Money }
  : T extends { amount?: unknown }
    ? Omit<T, 'amount'> & { amount?: Money }
    : T;
type Json<Op extends keyof operations> =
  operations[Op]['responses'] extends { 200: { content: { 'application/json': infer B } } } ? B : never;
type Body<Op extends keyof operations> =
  NonNullable<operations[Op]['requestBody']> extends { content: { 'application/json': infer B } } ? B : never;
type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;

/** How an answer came: set (not enumerable) on every object a call returns, as `lastResponse`. */
export interface ResponseMeta {
  status: number;
  requestId: string | null;
  /** The Idempotency-Key sent (the caller's, or the one generated). */
  idempotencyKey: string | null;
  /** Idempotent-Replayed: true (the key was used before: this is what the first call made). */
  replayed: boolean;
  /** How many requests the call took (1 + retries). */
  attempts: number;
  headers: Headers;
}
export type Result<T> = T & { readonly lastResponse: ResponseMeta };

export interface ClientOptions {
  /** Default http://localhost:8080. */
  baseURL?: string;
  /** Per attempt, in milliseconds; default 30 000. */
  timeout?: number;
  /** Retries of a retriable failure (README, "Retries"); default 2. */
  maxRetries?: number;
  /** The longest Retry-After waited for, in milliseconds (default 60 000); a longer one throws at once. */
  maxRetryWait?: number;
  /** First backoff delay without Retry-After, in milliseconds (default 500), doubled each retry, jittered. */
  retryBaseDelay?: number;
  /** Longest backoff delay, in milliseconds (default 8 000). */
  retryMaxDelay?: number;
  /** A fetch implementation; default globalThis.fetch. */
  fetch?: typeof fetch;
}

export interface CallOptions {
  timeout?: number;
  maxRetries?: number;
  signal?: AbortSignal;
}
export interface IdempotentCallOptions extends CallOptions {
  /** Sent as Idempotency-Key; the same on every retry of the call. */
  idempotencyKey?: string;
}

export type Session = Schemas['Session'];
export type CreateSessionRequest = AmountIn<Schemas['CreateSessionRequest']>;
export type MethodList = Schemas['MethodList'];
export type SandboxIssue = Schemas['SandboxIssue'];
export type SandboxResponse = Schemas['SandboxResponse'];
export type WebhookConfig = Schemas['WebhookConfig'];
export type WebhookConfigUpdate = Schemas['WebhookConfigUpdate'];
export type PaymentLink = Schemas['PaymentLink'];
export type PaymentLinkCreate = AmountIn<Schemas['PaymentLinkCreate']>;
export type PaymentLinkUpdate = Body<'updatePaymentLink'>;
export type PaymentLinkList = Schemas['PaymentLinkList'];
export type PaymentLinkCheck = Schemas['PaymentLinkCheck'];
export type RouteRequest = AmountIn<Schemas['RouteRequest']>;
export type RouteResponse = Schemas['RouteResponse'];
export type RouteOverview = Json<'routeOverview'>;
export type Transfer = Schemas['Transfer'];
export type TransferCreateRequest = AmountIn<Schemas['TransferCreateRequest']>;
export type TransferList = Schemas['TransferList'];
export type TransferOptions = Schemas['TransferOptions'];
export type TransferBatch = Schemas['TransferBatch'];
export type TransferRecipientRequest = Schemas['TransferRecipientRequest'];
export type TransferRecipient = Schemas['TransferRecipient'];
export type Refund = Schemas['Refund'];
export type RefundCreateRequest = AmountIn<Schemas['RefundCreateRequest']>;
export type RefundList = Schemas['RefundList'];
export type Delivery = Schemas['Delivery'];
export type DeliveryList = Schemas['DeliveryList'];
export type EventName = Schemas['EventName'];
export type TransactionsExportJSON = Json<'exportTransactions'>;

/** A webhook's event: a payment's (data: the session) or a transfer's (data: the transfer). */
export type PaymentEvent = Schemas['PaymentEvent'];
export type TransferEvent = Schemas['TransferEvent'];
export type WebhookEvent = PaymentEvent | TransferEvent;

/** Every route this library calls, as "METHOD /path". */
export declare const ROUTES: readonly string[];
export declare const VERSION: string;
export declare const DEFAULT_BASE_URL: string;

/** A new Idempotency-Key: a UUID v4 from the CSPRNG. */
export declare function newIdempotencyKey(): string;

/**
 * An answer other than 2xx, or none (CauriConnectionError, status 0).
 * code: the API's `code`; 401 and 429 without one get `unauthorized` and
 * `rate_limited`; null otherwise.
 */
export declare class CauriError extends Error {
  readonly status: number;
  readonly code: string | null;
  /** The field named by the answer, when the service sends one (it does not yet: the message names it). */
  readonly param: string | null;
  readonly requestId: string | null;
  /** Retry-After, in seconds. */
  readonly retryAfter: number | null;
  readonly idempotencyKey: string | null;
  readonly method: string | null;
  readonly path: string | null;
  /** The raw body. */
  readonly body: string | null;
  /** The body parsed: {error, code?} on /v1, {success: false, message} on /checkout. */
  readonly json: unknown;
}
/** No answer: code `network_error` or `timeout`; status 0. */
export declare class CauriConnectionError extends CauriError {
  readonly code: 'network_error' | 'timeout';
}

export declare class Cauri {
  constructor(key: string, options?: ClientOptions);
  readonly baseURL: string;

  sessions: {
    /** Retried only with an idempotencyKey (one per order). */
    create(params: CreateSessionRequest, options?: IdempotentCallOptions): Promise<Result<Session>>;
    status(id: string, options?: CallOptions): Promise<Result<Session>>;
    methods(id: string, query?: Query<'listCheckoutSessionMethods'>, options?: CallOptions): Promise<Result<MethodList>>;
  };
  sandbox: {
    /** Settles a test session: `succes` (paid) or `echec` (failed). Never retried. */
    settle(transactionId: string, issue?: SandboxIssue, options?: CallOptions): Promise<Result<SandboxResponse>>;
  };
  webhookConfig: {
    get(options?: CallOptions): Promise<Result<WebhookConfig>>;
    update(params: WebhookConfigUpdate, options?: CallOptions): Promise<Result<WebhookConfig>>;
  };
  paymentLinks: {
    create(params: PaymentLinkCreate, options?: CallOptions): Promise<Result<PaymentLink>>;
    list(query?: Query<'listPaymentLinks'>, options?: CallOptions): Promise<Result<PaymentLinkList>>;
    get(id: string, options?: CallOptions): Promise<Result<PaymentLink>>;
    update(id: string, params: PaymentLinkUpdate, options?: CallOptions): Promise<Result<PaymentLink>>;
    /** SVG (default) or PNG bytes. */
    qr(id: string, query?: Query<'paymentLinkQR'>, options?: CallOptions): Promise<Uint8Array>;
    check(id: string, options?: CallOptions): Promise<Result<PaymentLinkCheck>>;
  };
  transactions: {
    /** CSV text, or the parsed JSON with format json. The service answers the dashboard's cookie only (401 to a key). */
    export(query?: Query<'exportTransactions'> & { format?: 'csv' }, options?: CallOptions): Promise<string>;
    export(query: Query<'exportTransactions'> & { format: 'json' }, options?: CallOptions): Promise<Result<TransactionsExportJSON>>;
    /** The CSV as a stream of bytes (web ReadableStream), read at the caller's pace. */
    exportStream(query?: Query<'exportTransactions'>, options?: CallOptions): Promise<ReadableStream<Uint8Array>>;
  };
  routing: {
    recommend(params: RouteRequest, options?: CallOptions): Promise<Result<RouteResponse>>;
    overview(query: Query<'routeOverview'>, options?: CallOptions): Promise<Result<RouteOverview>>;
  };
  transfers: {
    /** An Idempotency-Key is generated when none is given, the same on every retry. */
    create(params: TransferCreateRequest, options?: IdempotentCallOptions): Promise<Result<Transfer>>;
    list(query?: Omit<Query<'listTransfers'>, 'options'>, options?: CallOptions): Promise<Result<TransferList>>;
    options(options?: CallOptions): Promise<Result<TransferOptions>>;
    batch(
      transfers: TransferCreateRequest[] | { transfers: TransferCreateRequest[] },
      options?: IdempotentCallOptions,
    ): Promise<Result<TransferBatch>>;
    recipient(params: TransferRecipientRequest, options?: CallOptions): Promise<Result<TransferRecipient>>;
    get(id: string, options?: CallOptions): Promise<Result<Transfer>>;
  };
  refunds: {
    /** An Idempotency-Key is generated when none is given, the same on every retry. */
    create(params: RefundCreateRequest, options?: IdempotentCallOptions): Promise<Result<Refund>>;
    list(query?: Query<'listRefunds'>, options?: CallOptions): Promise<Result<RefundList>>;
    get(id: string, options?: CallOptions): Promise<Result<Refund>>;
  };
  webhookDeliveries: {
    list(query?: Query<'listWebhookDeliveries'>, options?: CallOptions): Promise<Result<DeliveryList>>;
    get(id: string, options?: CallOptions): Promise<Result<Delivery>>;
    /** Never retried (each call is one more sending). */
    resend(id: string, options?: CallOptions): Promise<Result<Delivery>>;
  };

  /** verifyWebhook with this client's key as the secret. */
  verifyWebhook<E = WebhookEvent>(body: RawBody, headers: HeadersLike, options?: VerifyOptions): E;

  /** Whether a call may be retried: never a POST without an Idempotency-Key. */
  static retriable(method: string, idempotencyKey?: string | null): boolean;

  request<T = unknown>(
    method: string,
    path: string,
    options?: IdempotentCallOptions & {
      query?: Record<string, string | number | boolean | undefined | null>;
      body?: unknown;
      auth?: boolean;
      responseType?: 'json' | 'text' | 'bytes' | 'stream';
    },
  ): Promise<T>;
}
export default Cauri;
