<?php

declare(strict_types=1);

namespace Cauri;

/** An HTTP answer: status, headers (lowercase names, lists of values) and the raw body. */
final class Response
{
    /** @param array<string, list<string>> $headers */
    public function __construct(
        public readonly int $status,
        public readonly array $headers,
        public readonly string $body,
    ) {
    }

    public function header(string $name): ?string
    {
        return $this->headers[strtolower($name)][0] ?? null;
    }

    public function requestId(): ?string
    {
        return $this->header('x-request-id');
    }

    public function replayed(): bool
    {
        return $this->header('idempotent-replayed') === 'true';
    }
}
