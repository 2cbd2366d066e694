<?php

declare(strict_types=1);

namespace Cauri;

/**
 * A webhook request that does not verify: $reason (also $errorCode) is
 * no_signature (no usable X-Service-Signature: missing, no t=, no v1=),
 * bad_signature (no v1 matches the raw body under the secret) or too_old
 * (the timestamp is more than the tolerance away from now). Status 0:
 * answer the sender 400.
 */
final class WebhookException extends CauriException
{
    public const NO_SIGNATURE = 'no_signature';
    public const BAD_SIGNATURE = 'bad_signature';
    public const TOO_OLD = 'too_old';

    public function __construct(public readonly string $reason, string $message)
    {
        parent::__construct(0, $reason, $message);
    }
}
