<?php

declare(strict_types=1);

namespace Cauri;

/** The request got no HTTP answer (refused connection, DNS, timeout): status 0, code network_error. */
final class NetworkException extends CauriException
{
    public function __construct(string $message, ?\Throwable $previous = null)
    {
        parent::__construct(0, 'network_error', $message, previous: $previous);
    }
}
