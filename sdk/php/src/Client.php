<?php

declare(strict_types=1);

namespace Cauri;

use Cauri\Resources\PaymentLinks;
use Cauri\Resources\Refunds;
use Cauri\Resources\Routing;
use Cauri\Resources\Sandbox;
use Cauri\Resources\Sessions;
use Cauri\Resources\Transactions;
use Cauri\Resources\Transfers;
use Cauri\Resources\WebhookConfig;
use Cauri\Resources\WebhookDeliveries;

/**
 * Cauri's API with one workspace key:
 *
 *     $cauri = new \Cauri\Client(getenv('CAURI_SECRET_KEY'), ['base_url' => 'https://pay.example']);
 *     $session = $cauri->sessions->create(['amount' => 15000, 'currency' => 'XOF'], idempotencyKey: 'order-1042');
 *
 * Options: base_url (default http://localhost:8080), timeout (seconds per
 * attempt, default 30), max_retries (default 2), max_retry_wait (the longest
 * Retry-After honoured, seconds, default 60), retry_base_delay (first backoff,
 * seconds, default 0.5), transport (a Transport, for tests).
 *
 * Retries: 429, 5xx, 409 idempotency_key_in_use and network failures, with
 * exponential backoff and jitter, or after Retry-After when the answer
 * has one (an answer asking longer than max_retry_wait is returned as the
 * error at once). GET and PATCH are retried (reads, and PATCHes that set a
 * state: the same PATCH twice leaves the same state); a POST only when it
 * carries an Idempotency-Key, which is the same on every attempt.
 */
final class Client
{
    public const VERSION = '0.1.0';
    public const DEFAULT_BASE_URL = 'http://localhost:8080';

    /**
     * Every route the library calls ("METHOD /path", paths as openapi.yaml
     * writes them). A test holds it to GET /v1/openapi.json.
     */
    public const ROUTES = [
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
    ];

    /**
     * Paths the library leaves out on purpose (prefixes or exact paths), and why;
     * README.md says the same.
     */
    public const NOT_COVERED = [
        '/v1/partner/' => 'the partner API: another product, with its own secret (x-partner-secret), not a workspace key',
        '/dashboard' => 'the dashboard: HTML pages behind a browser session and CSRF',
        '/pay/' => 'the hosted payment and link pages, for customers\' browsers',
        '/callbacks/' => 'aggregators\' callbacks to Cauri',
        '/checkout/initiate' => 'the hosted page\'s own call',
        '/checkout/verify' => 'the hosted page\'s own call',
        '/checkout/code' => 'the hosted page\'s own call',
        '/static/' => 'the hosted page\'s icons',
        '/v1/openapi.json' => 'this document',
        '/v1/openapi.yaml' => 'this document',
        '/docs' => 'the rendered reference',
        '/healthz' => 'operations',
        '/readyz' => 'operations',
        '/metrics' => 'operations',
    ];

    public readonly Sessions $sessions;
    public readonly Sandbox $sandbox;
    public readonly WebhookConfig $webhookConfig;
    public readonly WebhookDeliveries $webhookDeliveries;
    public readonly PaymentLinks $paymentLinks;
    public readonly Transactions $transactions;
    public readonly Routing $routing;
    public readonly Transfers $transfers;
    public readonly Refunds $refunds;

    private string $baseUrl;
    private float $timeout;
    private int $maxRetries;
    private float $maxRetryWait;
    private float $retryBaseDelay;
    private Transport $transport;
    /** @var \Closure(float): void */
    private \Closure $sleep;

    /**
     * @param string $apiKey a workspace key: secret (svc_test_sec_..., svc_live_sec_...) or, for
     *        creating sessions and reading their status and methods only, public
     * @param array{base_url?: string, timeout?: float|int, max_retries?: int, max_retry_wait?: float|int,
     *        retry_base_delay?: float|int, transport?: Transport, sleep?: callable(float): void} $options
     */
    public function __construct(private readonly string $apiKey, array $options = [])
    {
        if ($apiKey === '') {
            throw new \InvalidArgumentException('Cauri: an API key is required');
        }
        $this->baseUrl = rtrim((string) ($options['base_url'] ?? self::DEFAULT_BASE_URL), '/');
        $this->timeout = (float) ($options['timeout'] ?? 30);
        $this->maxRetries = max(0, (int) ($options['max_retries'] ?? 2));
        $this->maxRetryWait = (float) ($options['max_retry_wait'] ?? 60);
        $this->retryBaseDelay = (float) ($options['retry_base_delay'] ?? 0.5);
        $this->transport = $options['transport'] ?? new Transport();
        $this->sleep = isset($options['sleep']) ? \Closure::fromCallable($options['sleep']) : static function (float $s): void {
            usleep((int) round($s * 1e6));
        };
        $this->sessions = new Sessions($this);
        $this->sandbox = new Sandbox($this);
        $this->webhookConfig = new WebhookConfig($this);
        $this->webhookDeliveries = new WebhookDeliveries($this);
        $this->paymentLinks = new PaymentLinks($this);
        $this->transactions = new Transactions($this);
        $this->routing = new Routing($this);
        $this->transfers = new Transfers($this);
        $this->refunds = new Refunds($this);
    }

    public function baseUrl(): string
    {
        return $this->baseUrl;
    }

    /**
     * Sends one call of ROUTES and returns the answer, or throws CauriException.
     *
     * @internal used by the resources
     * @param string $route one of ROUTES
     * @param array<string, string> $pathParams
     * @param array<string, mixed> $query
     * @param array<string, mixed>|null $body JSON body
     * @param array<string, string|null> $headers
     * @param resource|null $sink
     */
    public function request(string $route, array $pathParams = [], array $query = [], ?array $body = null, array $headers = [], ?string $idempotencyKey = null, $sink = null): Response
    {
        if (!in_array($route, self::ROUTES, true)) {
            throw new \LogicException("Cauri: $route is not in Client::ROUTES");
        }
        [$method, $path] = explode(' ', $route, 2);
        $path = preg_replace_callback('/\{(\w+)\}/', static function (array $m) use ($pathParams): string {
            $v = $pathParams[$m[1]] ?? '';
            if ($v === '') {
                throw new \InvalidArgumentException("Cauri: {$m[1]} is required");
            }
            return rawurlencode($v);
        }, $path);
        $query = array_filter($query, static fn ($v) => $v !== null);
        foreach ($query as $k => $v) {
            if (is_bool($v)) {
                $query[$k] = $v ? 'true' : 'false';
            }
        }
        $url = $this->baseUrl . $path . ($query ? '?' . http_build_query($query, '', '&', PHP_QUERY_RFC3986) : '');
        $h = [
            'Authorization' => 'Bearer ' . $this->apiKey,
            'Accept' => 'application/json',
            'User-Agent' => 'cauri-php/' . self::VERSION . ' PHP/' . PHP_VERSION,
            'Connection' => 'close',
        ];
        $payload = null;
        if ($body !== null) {
            $payload = Json::encode($body);
            $h['Content-Type'] = 'application/json';
        }
        if ($idempotencyKey !== null) {
            $h['Idempotency-Key'] = $idempotencyKey;
        }
        $h = array_filter(array_merge($h, $headers), static fn ($v) => $v !== null); // a null removes a header
        $retryable = $method !== 'POST' || $idempotencyKey !== null;

        for ($attempt = 0; ; $attempt++) {
            try {
                $res = $this->transport->send($method, $url, $h, $payload, $this->timeout, $sink);
            } catch (NetworkException $e) {
                if (!$retryable || $attempt >= $this->maxRetries) {
                    throw $e;
                }
                ($this->sleep)($this->backoff($attempt));
                continue;
            }
            if ($res->status >= 200 && $res->status < 300) {
                return $res;
            }
            $err = CauriException::fromResponse($res->status, $res->body, $res->headers);
            $again = $res->status === 429 || $res->status >= 500
                || ($res->status === 409 && $err->errorCode === 'idempotency_key_in_use');
            if (!$again || !$retryable || $attempt >= $this->maxRetries) {
                throw $err;
            }
            if ($err->retryAfter !== null) {
                if ($err->retryAfter > $this->maxRetryWait) {
                    throw $err; // waiting less than asked would only be refused again
                }
                $wait = (float) $err->retryAfter;
            } else {
                $wait = $this->backoff($attempt);
            }
            ($this->sleep)($wait);
        }
    }

    /** Exponential backoff with jitter: between half and all of base * 2^attempt, at most max_retry_wait. */
    private function backoff(int $attempt): float
    {
        $cap = min($this->maxRetryWait, $this->retryBaseDelay * (2 ** $attempt));
        return $cap / 2 + $cap / 2 * (random_int(0, 1_000_000) / 1_000_000);
    }

    /** A random UUID v4 from the CSPRNG, for Idempotency-Key. */
    public static function idempotencyKey(): string
    {
        $b = random_bytes(16);
        $b[6] = chr((ord($b[6]) & 0x0f) | 0x40);
        $b[8] = chr((ord($b[8]) & 0x3f) | 0x80);
        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($b), 4));
    }
}
