<?php

declare(strict_types=1);

namespace Cauri\Models;

use Cauri\Model;

/**
 * One webhook delivery and its attempts.
 *
 * @property-read string $id
 * @property-read string $object
 * @property-read string $event
 * @property-read string $url
 * @property-read string $status
 * @property-read int $attempts
 * @property-read int $max_attempts
 * @property-read ?string $next_attempt_at
 * @property-read ?int $last_status_code
 * @property-read ?string $last_error
 * @property-read int $response_ms
 * @property-read ?string $transaction_id
 * @property-read ?string $transfer_id
 * @property-read bool $livemode
 * @property-read string $created_at
 * @property-read ?string $delivered_at
 */
final class Delivery extends Model
{
    public const SCHEMA = '#/components/schemas/Delivery';
    public const FIELDS = ['id', 'object', 'event', 'url', 'status', 'attempts', 'max_attempts', 'next_attempt_at', 'last_status_code', 'last_error', 'response_ms', 'transaction_id', 'transfer_id', 'livemode', 'created_at', 'delivered_at'];
}
