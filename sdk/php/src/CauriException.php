<?php

declare(strict_types=1);

namespace Cauri;

/**
 * The one error type of the library: every refusal of the API, every network
 * failure (NetworkException, status 0) and every webhook that does not verify
 * (WebhookException, status 0) is one.
 *
 * The API answers two error shapes: {"error": "...", "code"?: "..."} on /v1
 * (transfers, refunds, links' test_mode and resends carry a `code`), and
 * {"success": false, "message": "..."} on /checkout/* (the sandbox). Both end
 * up here: $errorMessage is `error` or `message`; $errorCode is the API's
 * `code` when it sends one, otherwise one derived from the status
 * (400 invalid_request, 401 unauthorized, 403 forbidden, 404 not_found,
 * 409 conflict, 413 too_large, 415 unsupported_media_type, 422
 * idempotency_key_reused, 429 rate_limited, 5xx internal), so a caller can
 * always switch on it. $param is the body's `param` when present (the API
 * names a bad field in its message; it sends no `param` today).
 */
class CauriException extends \RuntimeException
{
    /** @param array<string, list<string>> $headers lowercase names */
    public function __construct(
        public readonly int $status,
        public readonly string $errorCode,
        public readonly string $errorMessage,
        public readonly ?string $param = null,
        public readonly ?string $rawBody = null,
        public readonly ?string $requestId = null,
        public readonly ?int $retryAfter = null,
        public readonly array $headers = [],
        ?\Throwable $previous = null,
    ) {
        $prefix = $status > 0 ? "HTTP $status" : 'Cauri';
        parent::__construct("$prefix $errorCode: $errorMessage" . ($requestId !== null ? " (request $requestId)" : ''), $status, $previous);
    }

    /** @param array<string, list<string>> $headers */
    public static function fromResponse(int $status, string $body, array $headers): self
    {
        $decoded = json_decode($body, true);
        $message = null;
        $code = null;
        $param = null;
        if (is_array($decoded)) {
            $err = $decoded['error'] ?? null;
            if (is_array($err)) { // a {error: {code, message, param}} shape, should the API grow one
                $message = isset($err['message']) ? (string) $err['message'] : null;
                $code = isset($err['code']) ? (string) $err['code'] : null;
                $param = isset($err['param']) ? (string) $err['param'] : null;
            } elseif (is_string($err)) {
                $message = $err;
            }
            if ($message === null && isset($decoded['message']) && is_string($decoded['message'])) {
                $message = $decoded['message'];
            }
            if ($code === null && isset($decoded['code']) && is_string($decoded['code'])) {
                $code = $decoded['code'];
            }
            if ($param === null && isset($decoded['param']) && is_string($decoded['param'])) {
                $param = $decoded['param'];
            }
        }
        $retryAfter = null;
        if (isset($headers['retry-after'][0]) && preg_match('/^\s*(\d+)\s*$/', $headers['retry-after'][0], $m)) {
            $retryAfter = (int) $m[1];
        }
        return new self(
            $status,
            $code ?? self::codeForStatus($status),
            $message ?? ($body !== '' ? substr($body, 0, 500) : "HTTP $status"),
            $param,
            $body,
            $headers['x-request-id'][0] ?? null,
            $retryAfter,
            $headers,
        );
    }

    public static function codeForStatus(int $status): string
    {
        return match (true) {
            $status === 400 => 'invalid_request',
            $status === 401 => 'unauthorized',
            $status === 402 => 'payment_required',
            $status === 403 => 'forbidden',
            $status === 404 => 'not_found',
            $status === 409 => 'conflict',
            $status === 410 => 'gone',
            $status === 413 => 'too_large',
            $status === 415 => 'unsupported_media_type',
            $status === 422 => 'idempotency_key_reused',
            $status === 429 => 'rate_limited',
            $status >= 500 => 'internal',
            default => 'http_' . $status,
        };
    }
}
